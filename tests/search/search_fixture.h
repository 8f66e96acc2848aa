// Shared helpers for search tests: Collage's test backends with adjustable limits, mock costs
// built in code, and one call that runs the whole pipeline.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "search/partitioner.h"
#include "tessera/backend_spec.h"
#include "backends/spec/backend_spec_detail.h"
#include "cost_models/mock_cost_model.h"

namespace tessera::testing {

inline BackendSpec collage_backend(const std::string& name, int max_depth) {
  BackendSpec spec = builtin_backend_spec(name);
  spec.detail().limits.max_depth = max_depth;
  spec.detail().limits.max_exits = 1;
  spec.detail().limits.allow_taps = false;
  return spec;
}

inline MockCostModel mock_costs(const std::map<std::string, double>& per_op) {
  MockCosts costs;
  costs.file = "<test>";
  for (const auto& [backend, c] : per_op) costs.backends[backend].per_op = c;
  return MockCostModel(costs);
}

// A plan's crossings counted by hand from its partitions: every value produced inside the graph
// (graph outputs included), its producer's backend, and the other backends reading it.
struct HandCrossing {
  ValueId value;
  std::string from;
  std::set<std::string> to;
};
inline std::vector<HandCrossing> hand_crossings(const Plan& plan, const Graph& g) {
  std::vector<std::string> backend_of(size_t(g.num_nodes()));
  for (const Partition& p : plan.partitions) p.nodes.for_each([&](int n) { backend_of[size_t(n)] = p.backend; });
  std::vector<HandCrossing> out;
  for (int n = 0; n < g.num_nodes(); ++n)
    for (ValueId v : g.node(n).outputs) {
      HandCrossing c{v, backend_of[size_t(n)], {}};
      for (int r = 0; r < g.num_nodes(); ++r)
        for (ValueId in : g.node(r).inputs)
          if (in == v && backend_of[size_t(r)] != c.from) c.to.insert(backend_of[size_t(r)]);
      out.push_back(std::move(c));
    }
  return out;
}

inline PartitionOutcome run_search(const Graph& g, const std::vector<BackendSpec>& backends, const CostModel& model,
                                   const std::string& search = "collage", bool coalesce = true, int threads = 1) {
  PartitionOptions options;
  options.model_path = "test";
  options.search = search;
  options.coalesce = coalesce;
  options.threads = threads;
  return partition_graph(g, backends, model, options);
}

// "byoc{r0} tvm{a} byoc{r1,out}": partitions in plan order with node names.
inline std::string describe(const Plan& plan, const Graph& g) {
  std::string s;
  for (const Partition& p : plan.partitions) {
    if (!s.empty()) s += " ";
    s += p.backend + "{";
    bool first = true;
    p.nodes.for_each([&](int v) {
      s += (first ? "" : ",") + g.node(v).name;
      first = false;
    });
    s += "}";
  }
  return s;
}

}  // namespace tessera::testing
