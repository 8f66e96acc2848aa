// Layout conversions as the search prices them (boundary_layout.h).
//
// Where a 4-D activation crosses from a backend whose boundary layout is NHWC (onednn, xnnpack)
// to one that reads plain NCHW (ref, eigen, blas, halide), or back, the executor converts it
// between the two functions. The search must see that price, or it fragments a plan into
// crossings it thinks are free. Each distinct (shape, from, to) is one request, priced by the
// run's cost model like a candidate:
//
//   value %c3 f32[1,96,112,112] produced on onednn, read on ref
//     -> request { layout_conversion(f32[1,96,112,112], nhwc, plain) on kConversionBackend,
//                  layouts all plain, hash = structural hash ^ kConversionTag }
//     -> measured (a oneDNN reorder) or estimated, cached in the cost database
//     -> added to boundary(%c3, onednn -> ref) (search_problem.h)
//
// Only values that may be charged (produced by a node and read by a node, graph outputs included) and
// are layout-sensitive are priced; nothing is when every backend has one layout.
#pragma once

#include <map>
#include <set>
#include <tuple>

#include "ir/boundary_layout.h"
#include "tessera/cost_model.h"
#include "cost_models/estimator.h"

namespace tessera {

struct ConversionPrices {
  std::map<std::tuple<DType, Shape, Layout, Layout>, Cost> costs;
  EstimateStats stats;
  // The price of converting `type` from `from` to `to`; zero when from == to, when the type is not
  // layout-sensitive, or when the conversion could not be priced (Unknown, Invalid).
  Cost operator()(const TensorType& type, Layout from, Layout to) const;
};

// Prices every conversion between the distinct `layouts` that a value of `graph` may need.
ConversionPrices price_conversions(const Graph& graph, const std::set<Layout>& layouts, const CostModel& model,
                                   const EstimateOptions& options);

}  // namespace tessera
