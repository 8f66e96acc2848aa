// The search under a memory budget (src/search/bounded_search.h): on large random DAGs whose nodes
// alternate between backends it finishes inside its budget; when the budget is too small it still
// answers, says which fallback gave the plan, and its lower bound is one: never above the exact
// optimum, never above the plan's total.
#include <catch2/catch.hpp>
#include <random>

#include "partition/test_graphs.h"
#include "search/bounded_search.h"
#include "search/crossing_accounting.h"
#include "search/plan_check.h"
#include "search/random_backends.h"
#include "search/search_fixture.h"
#include "support/graph_builder.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

// A random problem with priced boundaries between every pair of backends.
RandomProblem priced_problem(std::mt19937& rng, int nodes) {
  RandomProblem p = random_problem(rng, 3, true);
  p.nodes = nodes;
  p.graph = random_dag(rng, nodes, kRandomUnary, kRandomBinary);
  add_read_output(rng, p.graph);
  p.costs.boundary_default = {std::uniform_real_distribution<double>(0.2, 2.0)(rng), 0.0};
  return p;
}

PartitionOutcome search_within(const RandomProblem& p, const CostModel& costs, size_t budget, int threads = 1) {
  PartitionOptions options;
  options.model_path = "test";
  options.search_memory = budget;
  options.threads = threads;
  return partition_graph(p.graph, p.backends, costs, options);
}

double total(const PartitionOutcome& o) { return o.plan.total_cost.number(); }

}  // namespace

TEST_CASE("bounded search: random DAGs of 1,000-2,000 alternating nodes finish inside a 16 MB budget",
          "[search][bounded]") {
  std::mt19937 rng(20261127);
  constexpr size_t kBudget = size_t{16} << 20;
  for (int trial = 0; trial < 2; ++trial) {
    RandomProblem p = priced_problem(rng, 1000 + 1000 * trial);
    MockCostModel costs(p.costs);
    INFO("trial " << trial << ", " << p.nodes << " nodes, " << p.backends.size() << " backends");
    PartitionOutcome o = search_within(p, costs, kBudget);
    REQUIRE_FALSE(check_plan(o.plan, *o.index, p.backends));
    CHECK(size_t(o.search.stats.peak_bytes) <= kBudget);
    if (o.plan.optimality) {   // fell back: the bound must still be a bound
      CHECK(o.plan.optimality->lower_bound.number() <= total(o) + 1e-9);
      CHECK(o.plan.optimality->gap.number() == Approx(total(o) - o.plan.optimality->lower_bound.number()).margin(1e-9));
    }
    // Plans are byte-identical at any thread count, fallbacks included.
    if (trial > 0) continue;
    PartitionOutcome two = search_within(p, costs, kBudget, 2);
    CHECK(plan_to_json_text(two.plan, p.graph, {}) == plan_to_json_text(o.plan, p.graph, {}));
  }
}

TEST_CASE("bounded search: a budget too small falls back, says so, and bounds the optimum from below",
          "[search][bounded]") {
  std::mt19937 rng(20261128);
  int blind_or_beam = 0, greedy = 0, exact_runs = 0;
  for (int trial = 0; trial < 16; ++trial) {
    RandomProblem p = priced_problem(rng, 16 + 2 * trial);
    MockCostModel costs(p.costs);
    INFO("trial " << trial << ", " << p.nodes << " nodes");
    // Random DAGs with dense priced boundaries can need more than any budget (bounded_search.h):
    // only the trials whose exact search fits in 64 MB give an optimum to compare with.
    PartitionOutcome exact = search_within(p, costs, size_t{64} << 20);
    if (exact.plan.optimality) continue;
    ++exact_runs;
    REQUIRE_FALSE(exact.plan.optimality);
    REQUIRE(exact.search.bound.proven);
    const size_t peak = size_t(exact.search.stats.peak_bytes);
    // Half the exact search's peak: it must stop, and the fallbacks (whose states are at most the
    // covered sets) usually fit; one byte: nothing fits and greedy answers.
    for (size_t budget : {peak / 2, size_t{1}}) {
      PartitionOutcome fell = search_within(p, costs, budget);
      REQUIRE(fell.plan.optimality);
      REQUIRE_FALSE(check_plan(fell.plan, *fell.index, p.backends));
      const PlanOptimality& b = *fell.plan.optimality;
      CHECK(b.memory_budget == budget);
      CHECK(b.lower_bound.number() <= total(exact) + 1e-9);   // a lower bound on the optimum...
      CHECK(total(exact) <= total(fell) + 1e-9);              // ...which the fallback cannot beat
      CHECK(b.gap.number() == Approx(total(fell) - b.lower_bound.number()).margin(1e-9));
      bool said = false;
      for (const std::string& l : fell.limits) said = said || l.find("fell back to the " + b.fallback) != std::string::npos;
      CHECK(said);
      if (b.fallback == "greedy") ++greedy;
      else ++blind_or_beam;
      if (budget == 1) CHECK(b.fallback == "greedy");
    }
  }
  CHECK(exact_runs >= 10);
  CHECK(blind_or_beam >= exact_runs / 2);   // the middle budget must exercise the blind and beam searches
  CHECK(greedy >= exact_runs);
}

TEST_CASE("bounded search: the per-node lower bound is below every exact optimum", "[search][bounded]") {
  std::mt19937 rng(20261129);
  for (int trial = 0; trial < 30; ++trial) {
    RandomProblem p = priced_problem(rng, 8 + trial % 6);
    MockCostModel costs(p.costs);
    PartitionOutcome o = search_within(p, costs, 0);
    CHECK(per_node_lower_bound(o.problem, {}).number() <= total(o) + 1e-9);
  }
}

TEST_CASE("crossing accounting: a frontier value no later reader can be charged for is not state", "[search][bounded]") {
  // x -> a=Relu -> b=Abs, c=Sigmoid -> out=Add(b, c). Backend p takes only Relu, q takes all four.
  // With a on p, b on q pays a's value across once; after that c, which only q can take, can no
  // longer be charged for it: the entry goes, and the state is the one a on q leads to.
  GraphBuilder gb;
  ValueId x = gb.input("x");
  ValueId a = gb.op("Relu", "a", {x});
  ValueId b = gb.op("Abs", "b", {a});
  ValueId c = gb.op("Sigmoid", "c", {a});
  gb.op("Add", "out", {b, c});
  gb.outputs_for_unread();
  BackendSpec p = builtin_backend_spec("ref"), q = builtin_backend_spec("ref");
  p.name = "p";
  p.all_ops = false;
  p.ops = {"Relu"};
  q.name = "q";
  q.all_ops = false;
  q.ops = {"Abs", "Add", "Relu", "Sigmoid"};
  MockCosts mc;
  mc.file = "<test>";
  mc.backends["p"].per_op = 0.5;
  mc.backends["q"].per_op = 1.0;
  mc.boundary_default = {0.25, 0.0};
  MockCostModel costs(mc);
  PartitionOptions options;
  options.model_path = "test";
  options.coalesce = false;
  PartitionOutcome o = partition_graph(gb.g, {p, q}, costs, options);
  const SearchProblem& problem = o.problem;
  auto single = [&](const std::string& backend, int node) {
    for (size_t i = 0; i < problem.candidates.size(); ++i)
      if (problem.candidates[i].backend == backend && problem.candidates[i].inside() == IndexSet(4, {node})) return int(i);
    FAIL("no single candidate " << backend << "{" << node << "}");
    return -1;
  };
  FrontierState on_p, on_q;
  IndexSet none(4), first(4, {0});
  add_candidate_crossings(problem, none, single("p", 0), on_p);
  add_candidate_crossings(problem, none, single("q", 0), on_q);
  REQUIRE(on_p.size() == 1);   // a on p: b and c may still read it on q, and pay
  CHECK(on_q.empty());         // a on q: every reader left is on q, free
  Crossings paid = add_candidate_crossings(problem, first, single("q", 1), on_p);
  CHECK(paid.boundary.number() == Approx(0.25));
  CHECK(on_p == on_q);         // handed to q, read only on q from now on: nothing left to remember
  (void)a;
}
