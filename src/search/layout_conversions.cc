// Pricing layout conversions for the search (see layout_conversions.h).
#include "search/layout_conversions.h"

#include "ir/structural_hash.h"

namespace tessera {
namespace {

// Mixed into a conversion's structural hash: a conversion is priced with plain boundaries, a
// model candidate of the same shape (a lone Transpose) with its backend's native ones.
constexpr uint64_t kConversionTag = 0x6c61796f75742d31ull;   // "layout-1"

}  // namespace

Cost ConversionPrices::operator()(const TensorType& type, Layout from, Layout to) const {
  if (from == to || !layout_sensitive(type)) return Cost::zero();
  auto it = costs.find({type.dtype, type.shape, from, to});
  if (it == costs.end() || !it->second.is_value()) return Cost::zero();
  return it->second;
}

ConversionPrices price_conversions(const Graph& graph, const std::set<Layout>& layouts, const CostModel& model,
                                   const EstimateOptions& options) {
  ConversionPrices out;
  if (layouts.size() < 2) return out;
  std::set<TensorType, bool (*)(const TensorType&, const TensorType&)> types(
      [](const TensorType& a, const TensorType& b) { return std::tie(a.dtype, a.shape) < std::tie(b.dtype, b.shape); });
  const auto readers = graph.consumers();
  for (const Node& node : graph.nodes)
    for (ValueId v : node.outputs)
      if (v != kNoValue && !readers[size_t(v)].empty() && layout_sensitive(graph.value(v)))
        types.insert(graph.value(v).type);

  std::vector<std::tuple<DType, Shape, Layout, Layout>> keys;
  std::vector<Graph> functions;
  for (const TensorType& t : types)
    for (Layout from : layouts)
      for (Layout to : layouts)
        if (from != to) {
          keys.emplace_back(t.dtype, t.shape, from, to);
          functions.push_back(layout_conversion(t, from, to));
        }
  std::vector<CostRequest> requests;
  for (size_t i = 0; i < functions.size(); ++i) {
    const auto& [dtype, shape, from, to] = keys[i];
    CostRequest r(functions[i], structural_hash(functions[i]) ^ kConversionTag, kConversionBackend, "cpu",
                  std::string("layout ") + to_string(from) + "->" + to_string(to) + " " + shape_to_string(shape));
    r.layouts = std::make_shared<const BoundaryLayouts>(BoundaryLayouts{{Layout::plain}, {Layout::plain}});
    requests.push_back(std::move(r));
  }
  EstimateResult estimated = estimate_costs(model, requests, options);
  for (size_t i = 0; i < keys.size(); ++i) out.costs.emplace(keys[i], std::move(estimated.costs[i]));
  out.stats = estimated.stats;
  return out;
}

}  // namespace tessera
