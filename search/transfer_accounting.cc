#include "search/transfer_accounting.h"

#include <algorithm>

namespace tessera {

size_t value_bytes(const Graph& graph, ValueId v) {
  const TensorType& t = graph.value(v).type;
  int64_t n = t.numel();
  return n > 0 ? t.bytes() : 0;
}

Cost add_candidate_transfer(const SearchProblem& problem, const IndexSet& covered, int c, FrontierState& frontier) {
  const DataflowIndex& index = *problem.index;
  const Graph& graph = index.graph();
  const IndexSet& inside = problem.candidates[size_t(c)].inside();
  const uint8_t dev = static_cast<uint8_t>(problem.device_id[size_t(c)]);
  Cost cost;
  // Inputs read by c from covered producers: charge a crossing once per (value, device).
  inside.for_each([&](int n) {
    for (ValueId v : graph.node(n).inputs) {
      if (v == kNoValue) continue;
      NodeId p = graph.value(v).producer;
      if (p == kNoNode || inside.contains(p)) continue;
      auto it = std::lower_bound(frontier.begin(), frontier.end(), v,
                                 [](const FrontierEntry& e, ValueId x) { return e.value < x; });
      if (it == frontier.end() || it->value != v) continue;   // not covered yet: not our case
      if (it->device == dev || (it->shipped >> dev) & 1u) continue;
      it->shipped = static_cast<uint8_t>(it->shipped | (1u << dev));
      cost += problem.transfer_model
                  ? problem.transfer_model->transfer(value_bytes(graph, v), problem.device_names[it->device],
                                                     problem.device_names[dev])
                  : Cost::zero();
    }
  });
  // New frontier: values of covered | c still read outside it.
  IndexSet after = covered | inside;
  const auto& readers = index.value_consumers();
  auto still_read = [&](ValueId v) {
    for (NodeId r : readers[size_t(v)])
      if (!after.contains(r)) return true;
    return false;
  };
  FrontierState next;
  next.reserve(frontier.size() + 2);
  for (const FrontierEntry& e : frontier)
    if (still_read(e.value)) next.push_back(e);
  inside.for_each([&](int n) {
    for (ValueId v : graph.node(n).outputs)
      if (still_read(v)) next.push_back({v, dev, 0});
  });
  std::sort(next.begin(), next.end());
  frontier = std::move(next);
  return cost;
}

Cost plan_transfer_cost(const SearchProblem& problem, const std::vector<int>& chosen) {
  if (!problem.multi_device()) return Cost::zero();
  const Graph& graph = problem.index->graph();
  std::vector<int> node_dev(static_cast<size_t>(graph.num_nodes()), -1);
  for (int c : chosen)
    problem.candidates[size_t(c)].inside().for_each([&](int n) { node_dev[size_t(n)] = problem.device_id[size_t(c)]; });
  Cost cost;
  const auto& readers = problem.index->value_consumers();
  for (int n = 0; n < graph.num_nodes(); ++n) {
    for (ValueId v : graph.node(n).outputs) {
      uint32_t mask = 0;
      for (NodeId r : readers[size_t(v)]) {
        int d = node_dev[size_t(r)];
        if (d >= 0 && d != node_dev[size_t(n)]) mask |= 1u << d;
      }
      for (int d = 0; d < 8; ++d)
        if ((mask >> d) & 1u && problem.transfer_model)
          cost += problem.transfer_model->transfer(value_bytes(graph, v), problem.device_names[size_t(node_dev[size_t(n)])],
                                                   problem.device_names[size_t(d)]);
    }
  }
  return cost;
}

}  // namespace tessera
