// choose_within_budget (src/search/accuracy_budget.h) on Collage's diamond with mock costs: byoc plays
// the reduced-precision backend (cheaper, with an error per candidate), tvm the fp32 one.
#include <catch2/catch.hpp>

#include "search/accuracy_budget.h"
#include "search/search_fixture.h"
#include "support/collage_graphs.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

struct BudgetRun {
  int reduced_nodes = 0;     // nodes of the plan on byoc
  double proxy = 0.0;        // sum of the chosen byoc candidates' errors
  double total = 0.0;
};

// Error of a byoc candidate: 1e-3 per node, more for candidates holding the Add (node s), so the
// cheapest plans are not simply "everything reduced".
double candidate_error(const SearchProblem& p, int c) {
  const Candidate& cand = p.candidates[static_cast<size_t>(c)];
  if (cand.backend != "byoc") return -1.0;
  double e = 0.0;
  cand.inside().for_each([&](int v) { e += p.index->graph().node(v).op == "Add" ? 4e-3 : 1e-3; });
  return e;
}

BudgetRun run_with_budget(const Graph& g, double budget) {
  MockCostModel model = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  PartitionOptions options;
  options.model_path = "test";
  std::vector<double> error;
  options.allow = [&](const SearchProblem& p) {
    error.clear();
    for (size_t i = 0; i < p.candidates.size(); ++i) error.push_back(candidate_error(p, static_cast<int>(i)));
    return choose_within_budget(p, error, budget).allowed;
  };
  PartitionOutcome out = partition_graph(g, {collage_backend("tvm", 3), collage_backend("byoc", 3)}, model, options);
  BudgetRun r;
  for (int c : out.search.chosen)
    if (error[static_cast<size_t>(c)] >= 0) r.proxy += error[static_cast<size_t>(c)];
  for (const Partition& p : out.plan.partitions)
    if (p.backend == "byoc") r.reduced_nodes += p.nodes.count();
  r.total = out.plan.total_cost.number();
  return r;
}

}  // namespace

TEST_CASE("accuracy budget: tighter budgets give monotonically fewer reduced nodes, within the proxy") {
  const Graph g = collage_diamond();
  // A loose budget: the plan of the search without a budget.
  MockCostModel model = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  const Plan free = run_search(g, {collage_backend("tvm", 3), collage_backend("byoc", 3)}, model).plan;
  int free_reduced = 0;
  for (const Partition& p : free.partitions) free_reduced += p.backend == "byoc" ? p.nodes.count() : 0;
  BudgetRun prev = run_with_budget(g, 1.0);
  REQUIRE(free_reduced > 0);
  CHECK(prev.reduced_nodes == free_reduced);
  CHECK(prev.total == free.total_cost.number());
  for (double E : {0.01, 0.008, 0.006, 0.004, 0.003, 0.002, 0.001, 0.0005}) {
    INFO("budget " << E);
    BudgetRun r = run_with_budget(g, E);
    CHECK(r.proxy <= E + 1e-12);
    CHECK(r.reduced_nodes <= prev.reduced_nodes);
    CHECK(r.total >= prev.total);   // less budget never buys a cheaper plan
    prev = r;
  }
  CHECK(prev.reduced_nodes == 0);   // below every candidate's error: the fp32 plan
}

TEST_CASE("accuracy budget: a zero budget allows no reduced candidate with an error") {
  const Graph g = collage_diamond();
  BudgetRun r = run_with_budget(g, 0.0);
  CHECK(r.reduced_nodes == 0);
  CHECK(r.proxy == 0.0);
}

TEST_CASE("accuracy budget: the prior error counts convolutions and matmuls") {
  const Graph g = collage_diamond();   // no anchors at all: prior 0
  MockCostModel model = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  PartitionOutcome out = run_search(g, {collage_backend("tvm", 3), collage_backend("byoc", 3)}, model);
  for (size_t c = 0; c < out.problem.candidates.size(); ++c)
    CHECK(budget_prior_error(out.problem, static_cast<int>(c)) == 0.0);
}
