// In-plan prices (in_plan_prices.h): a plan's partitions and crossings priced as they run in it,
// kept in the cost database, reproduced from it without measuring, and written in the plan.
#include <catch2/catch.hpp>

#include "emit/emit_test_util.h"
#include "runtime/in_plan_prices.h"
#include "runtime/run_clock.h"
#include "backends/compilers/backend_compiler.h"
#include "cost_models/mock_cost_model.h"

using namespace tessera;

namespace {

MockCostModel mock_model() {
  MockCosts costs;
  costs.file = "<in-plan>";
  for (const char* b : {"onednn", "xnnpack", "ref"}) costs.backends[b].per_op = 1.0;
  return MockCostModel(costs);
}

// conv_block: x -> conv0 -> relu0 -> conv1 -> add0(+x) -> relu1 -> y. Between xnnpack (nhwc) and
// ref (plain) c1 is converted; between ref and onednn s0 is. The search's prices are made up.
Plan mixed_plan(const Graph& g) {
  Plan plan = test::hand_plan(g, {{"onednn", {"conv0"}, {}, 8.0}, {"xnnpack", {"relu0", "conv1"}, {}, 4.0},
                                  {"ref", {"add0"}, {}, 2.0}, {"onednn", {"relu1"}, {}, 1.0}});
  plan.boundaries.push_back({g.find_value("c1"), "xnnpack", "ref", 8 * 16 * 16 * 4, Cost::value(1.0)});
  plan.boundaries.push_back({g.find_value("s0"), "ref", "onednn", 8 * 16 * 16 * 4, Cost::value(2.0)});
  plan.boundary_cost = Cost::value(3.0);
  plan.total_cost = Cost::value(18.0);
  return plan;
}

}  // namespace

TEST_CASE("in-plan prices: every partition and crossing as timed in the plan, kept and reproduced") {
  const Graph g = load_model("data/models/conv_block.json");
  const MockCostModel model = mock_model();
  const Plan search = mixed_plan(g);
  CostDatabase db;

  Plan priced = search;
  REQUIRE(price_in_plan(g, priced, &db, model, {true, 1, 3}));
  REQUIRE(priced.isolated_total_cost);
  CHECK(priced.isolated_total_cost->number() == search.total_cost.number());
  Cost sum = Cost::zero();
  for (size_t k = 0; k < priced.partitions.size(); ++k) {
    const Partition& p = priced.partitions[k];
    REQUIRE(p.isolated_cost);
    CHECK(p.isolated_cost->number() == search.partitions[k].cost.number());
    REQUIRE(p.cost.is_value());
    CHECK(p.cost.number() > 0.0);
    CHECK(p.cost.number() < 0.5);   // timed kernels (microseconds; milliseconds under sanitizers), not the made-up 1-8 s
    sum += p.cost;
  }
  Cost crossings = Cost::zero();
  for (const Boundary& b : priced.boundaries) {
    CHECK(b.cost.number() < 0.5);   // timed conversions, not the made-up 1-2 s
    crossings += b.cost;
  }
  CHECK(priced.boundary_cost.number() == Approx(crossings.number()));
  CHECK(priced.total_cost.number() == Approx((sum + crossings).number()));
  CHECK(db.stats().entries == priced.partitions.size() + priced.boundaries.size());

  // From the database alone, the same plan byte for byte; without the prices, untouched.
  Plan again = search;
  REQUIRE(price_in_plan(g, again, &db, model, {false, 1, 3}));
  CHECK(plan_to_json_text(again, g) == plan_to_json_text(priced, g));
  CostDatabase empty;
  Plan untouched = search;
  CHECK_FALSE(price_in_plan(g, untouched, &empty, model, {false, 1, 3}));
  CHECK(plan_to_json_text(untouched, g) == plan_to_json_text(search, g));
  // Priced once only: a priced plan's prices are already in-plan.
  CHECK_FALSE(price_in_plan(g, priced, &db, model, {true, 1, 3}));
}

TEST_CASE("in-plan prices: the plan file keeps both figures and reads them back") {
  const Graph g = load_model("data/models/conv_block.json");
  const MockCostModel model = mock_model();
  Plan priced = mixed_plan(g);
  CostDatabase db;
  REQUIRE(price_in_plan(g, priced, &db, model, {true, 1, 2}));
  const std::string text = plan_to_json_text(priced, g);
  CHECK(text.find("\"isolated_total_cost\": 18.0") != std::string::npos);
  CHECK(text.find("\"isolated_cost\": 8.0") != std::string::npos);
  const Plan back = plan_from_json(nlohmann::json::parse(text), "plan.json", g);
  CHECK(plan_to_json_text(back, g) == text);
  CHECK(plan_to_json_text(mixed_plan(g), g).find("isolated") == std::string::npos);
}

TEST_CASE("in-plan prices: rounds go on while the quietest is well above the plan's end-to-end latency") {
  InPlanOptions o;
  o.rounds = 5;
  CHECK(in_plan_round_runs(4, 9.0, o));
  CHECK_FALSE(in_plan_round_runs(5, 9.0, o));   // no end-to-end figure: the 5 rounds
  o.end_to_end_ms = 4.0;
  CHECK(in_plan_round_runs(5, 5.9, o));         // disturbed through all 5 (mobilenet_v2 at 2 threads)
  CHECK(in_plan_round_runs(14, 5.9, o));
  CHECK_FALSE(in_plan_round_runs(15, 5.9, o));  // max_rounds
  CHECK_FALSE(in_plan_round_runs(5, 4.3, o));   // within 10%
  CHECK(in_plan_round_runs(0, 0.0, o));
}

TEST_CASE("in-plan prices: the typical round is shared out, at its level unless even the quietest was disturbed") {
  InPlanOptions o;
  // The median round by median run, not the quietest: what runs after tune read.
  InPlanLevel l = in_plan_level({4.6, 4.0, 5.9, 4.3, 4.4}, o);
  CHECK(l.round == 4);
  CHECK(l.run_ms == 4.4);
  l = in_plan_level({4.6, 4.0, 5.9, 4.3}, o);   // even: the lower middle
  CHECK(l.round == 3);
  CHECK(l.run_ms == 4.3);
  CHECK(in_plan_level({7.0}, o).run_ms == 7.0);
  CHECK(in_plan_level({}, o).run_ms == 0.0);
  o.end_to_end_ms = 12.8;
  l = in_plan_level({13.5, 13.9, 13.2}, o);     // within 10% of the race: the typical round's level
  CHECK(l.round == 0);
  CHECK(l.run_ms == 13.5);
  // A disturbance that outlasted every round: the typical round's shares at the race's latency.
  l = in_plan_level({15.5, 16.1, 15.2, 17.0, 15.9}, o);
  CHECK(l.round == 4);
  CHECK(l.run_ms == 12.8);
  CHECK(in_plan_level({12.0, 12.1, 11.9}, o).run_ms == 12.0);   // below the race: never raised to it
}

TEST_CASE("in-plan prices: a round lasts min_round_ms by the race's latency") {
  InPlanOptions o;
  CHECK(in_plan_repeat(o) == 10);   // no race latency: `repeat`
  o.end_to_end_ms = 12.0;
  CHECK(in_plan_repeat(o) == 17);   // 200 ms of a 12 ms plan
  o.end_to_end_ms = 40.0;
  CHECK(in_plan_repeat(o) == 10);
  o.end_to_end_ms = 0.01;
  CHECK(in_plan_repeat(o) == 1000);   // capped
}

TEST_CASE("in-plan prices: the level is the plan's runs without the observer, whatever the observer costs") {
  // An observer that takes 20 ms a step: profiled runs of the plan's 4 partitions and 2 crossings
  // last >= 120 ms, while the plan runs in microseconds (milliseconds under sanitizers). Priced at
  // the profiled runs' level the plan would cost >= 0.12 s; at its plain runs' level far less. At
  // one compute thread, where the clock is CPU time: a loaded machine's waits are not the plan's.
  const ScopedComputeThreads one(1);
  const Graph g = load_model("data/models/conv_block.json");
  const MockCostModel model = mock_model();
  Plan priced = mixed_plan(g);
  CostDatabase db;
  InPlanOptions o{true, 1, 2};
  const RunClock clock = plan_run_clock();
  int steps = 0;
  o.profiled_step = [&] {
    ++steps;
    const double until = run_clock_ms(clock) + 20.0;
    while (run_clock_ms(clock) < until) {
    }
  };
  REQUIRE(price_in_plan(g, priced, &db, model, o));
  REQUIRE(steps >= 2 * 4);
  CHECK(priced.total_cost.number() < 0.04);
}
