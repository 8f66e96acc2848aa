// The verified choice (verified_choice.h). Its database key: a plan's end-to-end latency is
// persisted under it, so its value is pinned like the functions' keys (tests/ir/structural_hash_test.cc);
// changing it orphans every recorded plan latency: a format break, needing a version bump and a
// migration note. Then the race's schedule, who wins a tie, and contenders that are one plan.
#include <catch2/catch.hpp>

#include "support/collage_graphs.h"
#include "cost_models/mock_cost_model.h"
#include "runtime/verified_choice.h"

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

// Pinned: a key changes only with kPlanRunRevision (4 since plans at one thread are timed in CPU time).
TEST_CASE("the cost database key of a plan's end-to-end latency is pinned") {
  const MockCostModel model = byoc_tvm_model();
  const Graph g = tessera::testing::collage_diamond();
  const DiamondPlans p = diamond_plans(g);
  CHECK(plan_latency_key(g, p.all_tvm, model).to_string() == "33093c4559a36de9 plan cpu mock/1/952c4598182e867e");
  CHECK(plan_latency_key(g, p.split, model).to_string() == "772b647d013d009f plan cpu mock/1/952c4598182e867e");
}

TEST_CASE("the race times close contenders again and keeps each one's typical round") {
  // Contender 0 (the search's plan) has one disturbed round; 1 is 30x slower; 2 is in the database.
  std::vector<std::vector<double>> script = {{9.5, 7.0, 7.4, 7.2, 7.1}, {300.0, 290.0}, {}};
  std::vector<size_t> calls(3, 0);
  VerifyOptions options;
  options.rounds = 5;
  std::vector<double> give_up(3, 0.0);   // the bar each contender's last round was given
  auto time_round = [&](size_t i, int, double give_up_above_ms) {
    give_up[i] = give_up_above_ms;
    return script[i].at(calls[i]++);
  };
  std::vector<std::optional<double>> known = {std::nullopt, std::nullopt, 7.6};
  auto raced = race_contenders(known, {1, 1, 0}, time_round, options);
  CHECK(calls == std::vector<size_t>{5, 1, 0});   // the hopeless one ran round 1 only; the known one never
  CHECK(*raced[0] == 7.2);                        // the median round, not the quietest (7.0)
  CHECK(*raced[1] == 300.0);
  CHECK(*raced[2] == 7.6);
  // A round may end after its first run when that run is give_up_above (3x) the best so far: the
  // database's 7.6 before anything ran, then contender 0's typical round of its first four.
  CHECK(give_up[1] == Approx(3 * 7.6));
  CHECK(give_up[0] == Approx(3 * 7.2));

  SECTION("the race ends when no two contenders are close") {
    calls.assign(3, 0);
    known[2] = 40.0;
    raced = race_contenders(known, {1, 1, 0}, time_round, options);
    CHECK(calls == std::vector<size_t>{1, 1, 0});
    CHECK(*raced[0] == 9.5);
  }
}

TEST_CASE("rounds after the first last min_round_ms by the best latency, in alternating directions") {
  // Three plans of a 0.4 ms model: round 1 at `repeat` runs, then 25 ms / 0.4 ms = 63 runs.
  std::vector<std::pair<size_t, int>> order;   // (contender, runs) in the order timed
  VerifyOptions options;
  options.rounds = 3;
  options.max_rounds = 3;
  auto raced = race_contenders({std::nullopt, std::nullopt, std::nullopt}, {1, 1, 1},
                               [&](size_t i, int repeat, double) {
                                 order.emplace_back(i, repeat);
                                 return 0.40 + 0.01 * static_cast<double>(i);
                               },
                               options);
  const std::vector<std::pair<size_t, int>> expected = {{0, 10}, {1, 10}, {2, 10}, {2, 63}, {1, 63},
                                                        {0, 63}, {0, 63}, {1, 63}, {2, 63}};
  CHECK(order == expected);
  CHECK(*raced[0] == Approx(0.40));

  SECTION("at most max_repeat runs, however fast the plan") {
    order.clear();
    options.rounds = 2;
    options.max_rounds = 2;
    race_contenders({std::nullopt, std::nullopt}, {1, 1},
                    [&](size_t i, int repeat, double) {
                      order.emplace_back(i, repeat);
                      return 0.001;
                    },
                    options);
    CHECK(order.back().second == 1000);
  }
}

TEST_CASE("the race's figures are paired with the pacer, round by round") {
  // PaddleOCR cls at 2 threads (tune): a neighbour took a core from round 3 into round
  // 6, for more of the mixed plan's rounds than of the single plan's. By typical round the mixed
  // plan leads (0.417 against 0.496); round by round the single plan is 5% faster.
  std::vector<std::vector<double>> script = {{0.492, 0.417, 0.545, 0.537, 0.552, 0.411, 0.397, 0.393},
                                             {0.496, 0.420, 0.514, 0.505, 0.528, 0.520, 0.374, 0.371}};
  VerifyOptions options;
  options.rounds = 8;
  options.max_rounds = 8;
  auto race = [&] {
    std::vector<size_t> calls(2, 0);
    return race_contenders({std::nullopt, std::nullopt}, {1, 1},
                           [&](size_t i, int, double) { return script[i].at(calls[i]++); }, options);
  };
  auto raced = race();
  CHECK(*raced[0] == Approx(0.417));            // the pacer: its own typical round
  CHECK(*raced[1] == Approx(0.417 * 0.9505).epsilon(1e-3));
  CHECK(*raced[1] < *raced[0] * 0.98);          // a mixed plan would not ship against it

  SECTION("a pacer given: it keeps its typical round, the other is paired with it") {
    options.pacer = 1;
    raced = race();
    CHECK(*raced[1] == Approx(0.496));
    CHECK(*raced[0] == Approx(0.496 / 0.9505).epsilon(2e-3));
  }

  SECTION("with fewer rounds beside the pacer than min_paired_rounds, a contender's own typical round") {
    options.min_paired_rounds = 9;
    raced = race();
    CHECK(*raced[1] == Approx(0.496));
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
                               [&](size_t i, int, double) { return script[i].at(calls[i]++); }, options);
  CHECK(calls == std::vector<size_t>{5, 5, 2});
  CHECK(*raced[0] == 10.0);
  CHECK(*raced[1] == 10.1);
  CHECK(*raced[2] == 10.5);   // the lower of its two rounds
}

TEST_CASE("a contender whose only round was disturbed runs a second round before it is dropped") {
  // 1's first round is 1.6x the leader (a burst), its next two the fastest; 2 is 2.5x twice; 3 is
  // past give_up_above (3x) and stops at once.
  std::vector<std::vector<double>> script = {{10.0, 10.0, 10.0}, {16.0, 9.5, 9.6}, {25.0, 25.0}, {40.0}};
  std::vector<size_t> calls(4, 0);
  VerifyOptions options;
  options.rounds = 3;
  options.max_rounds = 3;
  auto raced = race_contenders({std::nullopt, std::nullopt, std::nullopt, std::nullopt}, {1, 1, 1, 1},
                               [&](size_t i, int, double) { return script[i].at(calls[i]++); }, options);
  CHECK(calls == std::vector<size_t>{3, 3, 2, 1});
  CHECK(*raced[1] == 9.6);
  CHECK(*raced[2] == 25.0);
  CHECK(*raced[3] == 40.0);

  SECTION("it counts among those who can win: the race does not end after round 1") {
    script = {{10.0, 10.0}, {16.0, 9.5}};
    calls.assign(2, 0);
    options.rounds = 2;
    raced = race_contenders({std::nullopt, std::nullopt}, {1, 1},
                            [&](size_t i, int, double) { return script[i].at(calls[i]++); }, options);
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

TEST_CASE("a narrow race win ships a mixed plan only where the search's prices agree") {
  auto contender = [](const std::string& label, bool single, double ms, double search_s) {
    PlanContender c{.label = label, .single_backend = single};
    c.latency_ms = ms;
    c.plan.total_cost = Cost::value(search_s);
    return c;
  };
  // shufflenet_v2: the mix won the race by 4.8%, the search priced both plans alike.
  std::vector<PlanContender> c = {contender("collage", false, 2.256, 2.330e-3),
                                  contender("single:onednn", true, 2.371, 2.335e-3)};
  CHECK(pick_contender(c, 0.02, 0.10) == 1);
  c[0].plan.total_cost = Cost::value(2.2e-3);   // the search sees the mix 6% cheaper too
  CHECK(pick_contender(c, 0.02, 0.10) == 0);
  c[0].plan.total_cost = Cost::value(2.5e-3);   // the search sees it dearer, the race 12% faster
  c[0].latency_ms = 2.08;
  CHECK(pick_contender(c, 0.02, 0.10) == 0);    // a clear race win stands alone
  c[0].latency_ms = 2.256;
  c[0].plan.total_cost = Cost::unknown();       // no search price to compare: the race decides
  CHECK(pick_contender(c, 0.02, 0.10) == 0);
  c[0].plan.total_cost = Cost::value(2.5e-3);
  CHECK(pick_contender(c, 0.02, 1.0) == 1);     // clear_margin 1: every win needs the search
}

TEST_CASE("a narrow race win timed now is raced again, the two plans alone, and must hold there too") {
  auto contender = [](const std::string& label, bool single, double ms) {
    PlanContender c{.label = label, .single_backend = single};
    c.latency_ms = ms;
    c.measured_now = true;
    c.plan.total_cost = Cost::value(single ? 3.2e-3 : 2.93e-3);   // the search's prices agree
    return c;
  };
  // mobilenet_v3_large: the mix 6% ahead in the first race, behind when the two race alone.
  std::vector<PlanContender> c = {contender("collage", false, 3.00), contender("single:onednn", true, 3.20),
                                  contender("single:xnnpack", true, 4.10)};
  REQUIRE(pick_contender(c, 0.02, 0.10) == 0);
  const std::optional<NarrowWin> w = narrow_win(c, 0.02, 0.10);
  REQUIRE(w);
  CHECK(w->mixed == 0);
  CHECK(w->single == 1);

  std::vector<std::vector<double>> script = {{3.30, 3.31, 3.32}, {3.20, 3.18, 3.19}, {}};
  std::vector<size_t> calls(3, 0);
  VerifyOptions options;
  options.rounds = 3;
  options.max_rounds = 3;
  auto time_round = [&](size_t i, int, double) { return script[i].at(calls[i]++); };
  confirm_narrow_win(c, time_round, options);
  CHECK(calls == std::vector<size_t>{3, 3, 0});   // only the pair raced again
  CHECK(*c[0].latency_ms > *c[1].latency_ms);      // the mix keeps its worse ratio: behind
  CHECK(*c[1].latency_ms == 3.20);                 // the single plan keeps its figure
  CHECK(pick_contender(c, 0.02, 0.10) == 1);

  SECTION("confirmed: the mix keeps the larger of its two ratios and ships") {
    c[0].latency_ms = 3.00;
    script = {{2.90, 2.91, 2.92}, {3.20, 3.20, 3.20}, {}};
    calls.assign(3, 0);
    confirm_narrow_win(c, time_round, options);
    CHECK(*c[0].latency_ms == Approx(3.00));    // 0.9375 against 0.909: the larger
    CHECK(pick_contender(c, 0.02, 0.10) == 0);
  }
  SECTION("figures from the database are not raced again") {
    c[0].latency_ms = 3.00;
    c[1].measured_now = false;
    calls.assign(3, 0);
    confirm_narrow_win(c, time_round, options);
    CHECK(calls == std::vector<size_t>{0, 0, 0});
    CHECK(*c[0].latency_ms == 3.00);
  }
  SECTION("a clear win is not raced again") {
    c[0].latency_ms = 2.80;
    calls.assign(3, 0);
    confirm_narrow_win(c, time_round, options);
    CHECK(calls == std::vector<size_t>{0, 0, 0});
  }
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
