#include "search/crossing_accounting.h"

#include <algorithm>
#include <bit>

namespace tessera {

size_t value_bytes(const Graph& graph, ValueId v) {
  const TensorType& t = graph.value(v).type;
  int64_t n = t.numel();
  return n > 0 ? t.bytes() : 0;
}

namespace {

Cost transfer_price(const SearchProblem& problem, ValueId v, int from, int to) {
  if (!problem.transfer_model) return Cost::zero();
  return problem.transfer_model->transfer(value_bytes(problem.index->graph(), v), problem.device_names[size_t(from)],
                                          problem.device_names[size_t(to)]);
}

bool boundary_charged(const SearchProblem& problem, ValueId v) {
  return problem.has_boundaries && problem.boundary_slot[size_t(v)] >= 0;
}

}  // namespace

Crossings add_candidate_crossings(const SearchProblem& problem, const IndexSet& covered, int c, FrontierState& frontier) {
  const DataflowIndex& index = *problem.index;
  const Graph& graph = index.graph();
  const IndexSet& inside = problem.candidates[size_t(c)].inside();
  const uint8_t dev = static_cast<uint8_t>(problem.device_id[size_t(c)]);
  const uint8_t backend = static_cast<uint8_t>(problem.backend_id[size_t(c)]);
  Crossings cost;
  // Inputs read by c from covered producers: a transfer once per (value, device), a boundary
  // once per (value, backend).
  inside.for_each([&](int n) {
    for (ValueId v : graph.node(n).inputs) {
      if (v == kNoValue) continue;
      NodeId p = graph.value(v).producer;
      if (p == kNoNode || inside.contains(p)) continue;
      auto it = std::lower_bound(frontier.begin(), frontier.end(), v,
                                 [](const FrontierEntry& e, ValueId x) { return e.value < x; });
      if (it == frontier.end() || it->value != v) continue;   // not covered yet: not our case
      if (it->device != dev && !((it->shipped >> dev) & 1u)) {
        it->shipped = static_cast<uint8_t>(it->shipped | (1u << dev));
        cost.transfer += transfer_price(problem, v, it->device, dev);
      }
      if (!((it->handed >> backend) & 1u) && boundary_charged(problem, v)) {
        const Cost& price = problem.boundary_price(v, it->backend, backend);
        if (price != Cost::zero()) {   // only priced hand-overs are state
          it->handed |= problem.handed_mask[backend];
          cost.boundary += price;
        }
      }
    }
  });
  // New frontier: values of covered | c still read outside it, each reduced to what a later step
  // can still be charged for.
  IndexSet after = covered | inside;
  const auto& readers = index.value_consumers();
  // Whether v is still read, and by which backends it may be.
  struct Reach {
    bool read = false;
    uint32_t backends = 0;
  };
  auto reach = [&](ValueId v) {
    Reach out;
    for (NodeId r : readers[size_t(v)])
      if (!after.contains(r)) {
        out.read = true;
        out.backends |= problem.node_backends[size_t(r)];
      }
    return out;
  };
  // Whether e can still cost something; forgets handed bits no later reader can use. On one
  // device an entry whose every reachable backend is handed already or free to reach is dropped:
  // it can never be charged again, so keeping it would only split equal states.
  auto reduce = [&](FrontierEntry& e, const Reach& r) {
    if (!r.read) return false;
    const uint32_t backends = r.backends;
    e.handed &= backends;
    if (problem.multi_device()) return true;
    if (!boundary_charged(problem, e.value)) return false;
    for (uint32_t open = backends & ~e.handed; open; open &= open - 1)
      if (problem.boundary_price(e.value, e.backend, std::countr_zero(open)) != Cost::zero()) return true;
    return false;
  };
  FrontierState next;
  next.reserve(frontier.size() + 2);
  for (FrontierEntry e : frontier)
    if (reduce(e, reach(e.value))) next.push_back(e);
  // A new frontier value is kept only when its future can cost something: another device may read
  // it, or some boundary price of it to a backend that may read it is not zero; its producer is
  // recorded by price class.
  inside.for_each([&](int n) {
    for (ValueId v : graph.node(n).outputs) {
      if (v == kNoValue) continue;
      const Reach r = reach(v);
      if (!r.read) continue;
      const bool priced = boundary_charged(problem, v) && problem.boundary_priced[size_t(problem.boundary_slot[size_t(v)])];
      if (!priced && !problem.multi_device()) continue;
      const uint8_t cls = priced ? problem.price_class[size_t(problem.boundary_slot[size_t(v)]) * problem.backend_names.size() + backend]
                                 : backend;
      FrontierEntry e{v, dev, 0, cls, 0};
      if (reduce(e, r)) next.push_back(e);
    }
  });
  std::sort(next.begin(), next.end());
  frontier = std::move(next);
  return cost;
}

PlanCrossings plan_crossings(const SearchProblem& problem, const std::vector<int>& chosen) {
  const Graph& graph = problem.index->graph();
  std::vector<int> node_dev(static_cast<size_t>(graph.num_nodes()), -1);
  std::vector<int> node_backend(static_cast<size_t>(graph.num_nodes()), -1);
  for (int c : chosen)
    problem.candidates[size_t(c)].inside().for_each([&](int n) {
      node_dev[size_t(n)] = problem.device_id[size_t(c)];
      node_backend[size_t(n)] = problem.backend_id[size_t(c)];
    });
  PlanCrossings out;
  const auto& readers = problem.index->value_consumers();
  for (int n = 0; n < graph.num_nodes(); ++n) {
    for (ValueId v : graph.node(n).outputs) {
      if (v == kNoValue) continue;
      uint32_t devices = 0, backends = 0;
      for (NodeId r : readers[size_t(v)]) {
        int d = node_dev[size_t(r)], b = node_backend[size_t(r)];
        if (d >= 0 && d != node_dev[size_t(n)]) devices |= 1u << d;
        if (b >= 0 && b != node_backend[size_t(n)]) backends |= 1u << b;
      }
      for (int d = 0; d < 8; ++d)
        if ((devices >> d) & 1u) out.transfer += transfer_price(problem, v, node_dev[size_t(n)], d);
      uint32_t handed = 0;
      for (int b = 0; b < 32; ++b) {
        if (!((backends >> b) & 1u)) continue;
        const bool charged = boundary_charged(problem, v) && !((handed >> b) & 1u);
        Cost price = charged ? problem.boundary_price(v, node_backend[size_t(n)], b) : Cost::zero();
        if (charged && price != Cost::zero()) handed |= problem.handed_mask[size_t(b)];
        out.boundary += price;
        out.boundaries.push_back({v, node_backend[size_t(n)], b, value_bytes(graph, v), std::move(price)});
      }
    }
  }
  return out;
}

}  // namespace tessera
