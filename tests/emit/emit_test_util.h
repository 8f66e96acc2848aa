// Helpers for emit tests: hand-made plans over a graph (by node names), models, golden files.
//
// Golden files live in tests/emit/golden/<name>.txt. A pass that must change nothing is checked
// against a golden file holding exactly "unchanged", its own expectation (XLA's expect_change=false)
// rather than a copy of its input. TESSERA_UPDATE_GOLDEN=1 rewrites the files instead of comparing (support/golden.h).
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/golden.h"
#include "tessera/graph.h"
#include "tessera/model_loader.h"
#include "tessera/plan.h"

namespace tessera::test {

struct HandComposite {
  std::string name;
  std::vector<std::string> nodes;
};
struct HandPartition {
  std::string backend;
  std::vector<std::string> nodes;
  std::vector<HandComposite> composites;
  double cost = 1.0;
};

inline IndexSet node_set(const Graph& g, const std::vector<std::string>& names) {
  IndexSet s(g.num_nodes());
  for (const std::string& n : names) {
    NodeId id = g.find_node(n);
    REQUIRE(id != kNoNode);
    s.insert(id);
  }
  return s;
}

// One candidate per partition; function names left empty (outline names them).
inline Plan hand_plan(const Graph& g, const std::vector<HandPartition>& parts) {
  Plan plan;
  plan.model = g.source.empty() ? g.name : g.source;
  plan.search = "hand";
  plan.cost_model = "mock";
  double total = 0;
  for (const HandPartition& hp : parts) {
    Partition p;
    p.backend = hp.backend;
    p.device = "cpu";
    p.nodes = node_set(g, hp.nodes);
    p.cost = Cost::value(hp.cost);
    ChosenCandidate c{p.nodes, hp.backend + ".hand", p.cost, {}};
    for (const HandComposite& hc : hp.composites) c.composites.push_back(Composite{hc.name, "", node_set(g, hc.nodes)});
    p.candidates.push_back(std::move(c));
    total += hp.cost;
    plan.partitions.push_back(std::move(p));
  }
  plan.total_cost = Cost::value(total);
  plan.transfer_cost = Cost::value(0);
  return plan;
}

inline Graph load_test_model(const std::string& name) {
  ImportOptions options;
  options.warn = [](const std::string&) {};
  return load_model(std::string(TESSERA_SOURCE_DIR) + "/data/models/" + name, options);
}

inline std::string golden_path(const std::string& name) {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/emit/golden/" + name + ".txt";
}

inline void check_golden(const std::string& name, const std::string& actual) {
  testing::check_golden(golden_path(name), actual);
}

// A pass's effect as golden text: "unchanged\n" when after == before, else the new text.
inline void check_pass_golden(const std::string& name, const std::string& before, const std::string& after) {
  check_golden(name, after == before ? std::string("unchanged\n") : after);
}

}  // namespace tessera::test
