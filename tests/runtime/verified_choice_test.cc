// The verified choice (verified_choice.h). Its database key: a plan's end-to-end latency is
// persisted under it, so its value is pinned like the functions' keys (tests/ir/structural_hash_test.cc);
// changing it orphans every recorded plan latency: a format break, needing a version bump and a
// migration note. Then the race's schedule, who wins a tie, and contenders that are one plan.
#include <catch2/catch.hpp>

#include "support/collage_graphs.h"
#include "tessera/mock_cost_model.h"
#include "tessera/verified_choice.h"

using namespace tessera;

namespace {

// byoc at 1 per op, tvm at 2: the model whose fingerprint the pinned keys carry.
MockCostModel byoc_tvm_model() {
  MockCosts costs;
  costs.file = "<pinned>";
  costs.backends["byoc"].per_op = 1.0;
  costs.backends["tvm"].per_op = 2.0;
  return MockCostModel(costs);
}

// collage_diamond (r0 r1 a r2 s r3 out) all on tvm, and split between byoc and tvm.
struct DiamondPlans {
  Plan all_tvm, split;
};
DiamondPlans diamond_plans(const Graph& g) {
  auto partition = [](const std::string& backend, IndexSet nodes) {
    Partition p;
    p.backend = backend;
    p.device = "cpu";
    p.nodes = std::move(nodes);
    return p;
  };
  DiamondPlans plans;
  plans.all_tvm.partitions.push_back(partition("tvm", IndexSet::all(g.num_nodes())));
  plans.split.partitions.push_back(partition("byoc", IndexSet(g.num_nodes(), {0, 1, 3, 4, 5})));
  plans.split.partitions.push_back(partition("tvm", IndexSet(g.num_nodes(), {2, 6})));
  return plans;
}

}  // namespace

// Pinned: a key changes only with kPlanRunRevision (2 since graph inputs cross into functions plain).
TEST_CASE("the cost database key of a plan's end-to-end latency is pinned") {
  const MockCostModel model = byoc_tvm_model();
  const Graph g = tessera::testing::collage_diamond();
  const DiamondPlans p = diamond_plans(g);
  CHECK(plan_latency_key(g, p.all_tvm, model).to_string() == "33093e4559a3714f plan cpu mock/1/952c4598182e867e");
  CHECK(plan_latency_key(g, p.split, model).to_string() == "772b627d013cfd39 plan cpu mock/1/952c4598182e867e");
}

TEST_CASE("the race times close contenders again and keeps each one's quietest round") {
  // Contender 0 (the search's plan) has one disturbed round; 1 is 30x slower; 2 is in the database.
  std::vector<std::vector<double>> script = {{9.5, 7.0, 7.4, 7.2}, {300.0, 290.0}, {}};
  std::vector<size_t> calls(3, 0);
  VerifyOptions options;
  options.rounds = 4;
  std::vector<double> give_up(3, 0.0);   // the bar each contender's last round was given
  auto time_round = [&](size_t i, double give_up_above_ms) {
    give_up[i] = give_up_above_ms;
    return script[i].at(calls[i]++);
  };
  std::vector<std::optional<double>> known = {std::nullopt, std::nullopt, 7.3};
  auto raced = race_contenders(known, {1, 1, 0}, time_round, options);
  CHECK(calls == std::vector<size_t>{4, 1, 0});   // the hopeless one ran round 1 only; the known one never
  CHECK(*raced[0] == 7.0);
  CHECK(*raced[1] == 300.0);
  CHECK(*raced[2] == 7.3);
  // A round may end after its first run when that run is give_up_above (3x) the best so far: the
  // database's 7.3 before anything ran, then contender 0's quietest round.
  CHECK(give_up[1] == Approx(3 * 7.3));
  CHECK(give_up[0] == Approx(3 * 7.0));

  SECTION("the race ends when no two contenders are close") {
    calls.assign(3, 0);
    known[2] = 40.0;
    raced = race_contenders(known, {1, 1, 0}, time_round, options);
    CHECK(calls == std::vector<size_t>{1, 1, 0});
    CHECK(*raced[0] == 9.5);
  }
}

TEST_CASE("the race goes on between contenders within `close` of the best, up to max_rounds") {
  // 0 and 1 are 1% apart after the regular rounds; 2 is 5% behind and stops there.
  std::vector<std::vector<double>> script = {{10.0, 10.0, 10.0, 9.9, 10.0}, {10.1, 10.1, 10.1, 10.1, 10.1}, {10.6, 10.5}};
  std::vector<size_t> calls(3, 0);
  VerifyOptions options;
  options.rounds = 2;
  options.max_rounds = 5;
  auto raced = race_contenders({std::nullopt, std::nullopt, std::nullopt}, {1, 1, 1},
                               [&](size_t i, double) { return script[i].at(calls[i]++); }, options);
  CHECK(calls == std::vector<size_t>{5, 5, 2});
  CHECK(*raced[0] == 9.9);
  CHECK(*raced[1] == 10.1);
  CHECK(*raced[2] == 10.5);
}

TEST_CASE("a contender whose only round was disturbed runs a second round before it is dropped") {
  // 1's first round is 1.6x the leader (a burst), its second the fastest; 2 is 2.5x twice; 3 is
  // past give_up_above (3x) and stops at once.
  std::vector<std::vector<double>> script = {{10.0, 10.0, 10.0}, {16.0, 9.5, 9.6}, {25.0, 25.0}, {40.0}};
  std::vector<size_t> calls(4, 0);
  VerifyOptions options;
  options.rounds = 3;
  options.max_rounds = 3;
  auto raced = race_contenders({std::nullopt, std::nullopt, std::nullopt, std::nullopt}, {1, 1, 1, 1},
                               [&](size_t i, double) { return script[i].at(calls[i]++); }, options);
  CHECK(calls == std::vector<size_t>{3, 3, 2, 1});
  CHECK(*raced[1] == 9.5);
  CHECK(*raced[2] == 25.0);
  CHECK(*raced[3] == 40.0);

  SECTION("it counts among those who can win: the race does not end after round 1") {
    script = {{10.0, 10.0}, {16.0, 9.5}};
    calls.assign(2, 0);
    options.rounds = 2;
    raced = race_contenders({std::nullopt, std::nullopt}, {1, 1}, [&](size_t i, double) { return script[i].at(calls[i]++); }, options);
    CHECK(calls == std::vector<size_t>{2, 2});
    CHECK(*raced[1] == 9.5);
  }
}

TEST_CASE("a mixed plan ships only when it is tie_margin faster than every single-backend plan") {
  auto contender = [](const std::string& label, bool single, std::optional<double> ms) {
    PlanContender c{.label = label, .single_backend = single};
    c.latency_ms = ms;
    return c;
  };
  std::vector<PlanContender> c = {contender("collage", false, 9.9), contender("collage:merged", false, 9.85),
                                  contender("single:onednn", true, 10.0), contender("single:xnnpack", true, 10.05)};
  CHECK(pick_contender(c, 0.02) == 2);   // 1% faster is a tie: the single plan
  c[1].latency_ms = 9.7;
  CHECK(pick_contender(c, 0.02) == 1);   // 3% faster than single:onednn and 2% faster than collage
  c[0].latency_ms = 9.6;
  CHECK(pick_contender(c, 0.02) == 0);   // the search's plan keeps a tie with the merged one
  c[3].latency_ms = 9.4;
  CHECK(pick_contender(c, 0.02) == 3);
  c[3].latency_ms.reset();               // did not run here: cannot win
  CHECK(pick_contender(c, 0.02) == 0);
  c.erase(c.begin() + 2, c.end());
  CHECK(pick_contender(c, 0.02) == 0);   // no single plan measured: the fastest mixed one
}

TEST_CASE("a search plan that is a single-backend plan races as that plan, under its label") {
  const MockCostModel model = byoc_tvm_model();
  const Graph g = tessera::testing::collage_diamond();
  const DiamondPlans p = diamond_plans(g);
  // Latencies from the database (nothing measured): the search's plan is all-tvm, as is single:tvm.
  CostDatabase db;
  db.insert(plan_latency_key(g, p.all_tvm, model), CostEntry{Cost::value(1.00e-3), 0.0, 10});
  db.insert(plan_latency_key(g, p.split, model), CostEntry{Cost::value(0.99e-3), 0.0, 10});
  std::vector<PlanContender> c = {PlanContender{.label = "collage", .plan = p.all_tvm},
                                  PlanContender{.label = "single:byoc", .plan = p.split, .single_backend = true},
                                  PlanContender{.label = "single:tvm", .plan = p.all_tvm, .single_backend = true}};
  VerifyOptions options;
  options.may_measure = false;
  const size_t best = choose_fastest_plan(g, c, &db, model, options);
  REQUIRE(c.size() == 2);
  CHECK(c[0].label == "single:tvm");
  CHECK(c[0].single_backend);
  CHECK(best == 1);   // two single plans: the faster by any margin
}
