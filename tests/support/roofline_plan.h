// A plan of `g` over `backends` (a comma list, as --backends) by plain roofline costs: what the
// runtime tests run when the plan's choice is not what they test.
#pragma once

#include <memory>
#include <string>

#include "search/partitioner.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_model.h"

namespace tessera::testing {

inline Plan roofline_plan(const Graph& g, const std::string& backends, const std::string& search = "collage") {
  std::unique_ptr<CostModel> model = make_cost_model("roofline");
  PartitionOptions options;
  options.model_path = g.source;
  options.search = search;
  return partition_graph(g, resolve_backends(split_backend_list(backends), {}), *model, options).plan;
}

}  // namespace tessera::testing
