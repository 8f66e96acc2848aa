// Boundary costs (docs/design.md "Crossings"): a value handed from one backend's function to
// another's pays latency + bytes * per_byte once per (value, consuming backend). The search must
// stay exact with them: collage == exhaustive on random DAGs, and the plan's boundary_cost must be
// what an independent recount of the plan's crossings gives.
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>

#include "partition/test_graphs.h"
#include "search/plan_check.h"
#include "search/random_backends.h"
#include "search/search_fixture.h"
#include "support/graph_builder.h"
#include "tessera/error.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

// The contract's rule, written out directly from a plan's partitions: every value produced inside
// a partition on backend A (a graph output too) pays, once per other backend B reading it.
double recount_boundaries(const Plan& plan, const Graph& g, const MockCosts& mc) {
  double total = 0;
  for (const HandCrossing& c : hand_crossings(plan, g))
    for (const std::string& to : c.to) {
      auto it = mc.boundary_pairs.find(c.from + "->" + to);
      const MockCrossing& price = it != mc.boundary_pairs.end() ? it->second : mc.boundary_default;
      total += price.latency + double(g.value(c.value).type.bytes()) * price.per_byte;
    }
  return total;
}

}  // namespace

TEST_CASE("boundary costs: collage equals exhaustive on 200 random DAGs, and the plan's boundary cost recounts",
          "[search][random][boundary]") {
  std::mt19937 rng(20261123);
  int priced = 0, outputs_priced = 0;
  for (int trial = 0; trial < 200; ++trial) {
    auto [n, g, backends, mc] = random_problem(rng, 10, false);
    if (trial % 2 == 0) add_read_output(rng, g);
    std::uniform_real_distribution<double> w(0.5, 5.0);
    mc.boundary_default = {w(rng) * 0.5, trial % 2 ? 1e-3 : 0.0};
    // Some directed pairs priced apart (cheap or dear), so A->B and B->A differ.
    for (const BackendSpec& a : backends)
      for (const BackendSpec& b : backends)
        if (a.name != b.name && std::uniform_int_distribution<int>(0, 2)(rng) == 0)
          mc.boundary_pairs[a.name + "->" + b.name] = {std::uniform_real_distribution<double>(0.0, 4.0)(rng), 0.0};
    // Every fourth trial also puts b0 on another device: transfers and boundaries add up.
    if (trial % 4 == 0) {
      backends[0].device = "gpu";
      mc.transfer_latency = w(rng);
    }
    MockCostModel costs(mc);
    INFO("trial " << trial << ", " << n << " nodes, " << backends.size() << " backends");
    PartitionOutcome collage = run_search(g, backends, costs, "collage");
    PartitionOutcome exhaustive = run_search(g, backends, costs, "exhaustive", false);
    REQUIRE(collage.plan.total_cost.is_value());
    REQUIRE(collage.plan.total_cost.number() == Approx(exhaustive.plan.total_cost.number()).epsilon(1e-9));
    for (const PartitionOutcome* o : {&collage, &exhaustive}) {
      INFO(o->plan.search);
      REQUIRE_FALSE(check_plan(o->plan, *o->index, backends));
      REQUIRE(o->plan.boundary_cost.number() == Approx(recount_boundaries(o->plan, g, mc)).margin(1e-9));
      double parts = 0;
      for (const Partition& p : o->plan.partitions) parts += p.cost.number();
      REQUIRE(o->plan.total_cost.number() ==
              Approx(parts + o->plan.transfer_cost.number() + o->plan.boundary_cost.number()).epsilon(1e-12));
    }
    // Greedy and single-backend plans are priced by the same rule and can only be dearer.
    PartitionOutcome greedy = run_search(g, backends, costs, "greedy");
    REQUIRE(greedy.plan.boundary_cost.number() == Approx(recount_boundaries(greedy.plan, g, mc)).margin(1e-9));
    REQUIRE(greedy.plan.total_cost >= collage.plan.total_cost);
    if (collage.plan.boundary_cost.number() > 0) ++priced;
    for (const Boundary& b : collage.plan.boundaries)
      if (g.is_output(b.value) && b.cost.number() > 0) {
        ++outputs_priced;
        break;
      }
  }
  // Graph outputs read by another backend must show up priced, or the contract goes untested.
  CHECK(outputs_priced >= 5);
  // The generator must produce plans that actually cross priced boundaries, or this test says nothing.
  CHECK(priced >= 40);
}

TEST_CASE("boundary costs: a dear crossing moves a cheap node back onto its neighbours' backend", "[search][boundary]") {
  // x -> r0 -> a -> r1: byoc takes Relus only (cheap), tvm takes everything (dearer per op);
  // max_depth 1 keeps every candidate a single node, so the prices below are easy to follow.
  GraphBuilder b;
  b.output(b.op("Relu", "r1", {b.op("Abs", "a", {b.op("Relu", "r0", {b.input("x")})})}));
  const Graph& g = b.g;
  std::vector<BackendSpec> backends{collage_backend("tvm", 1), collage_backend("byoc", 1)};
  MockCosts mc;
  mc.file = "<test>";
  mc.backends["tvm"].per_op = 2.0;
  mc.backends["tvm"].decay = 1.0;
  mc.backends["byoc"].per_op = 1.0;
  mc.backends["byoc"].decay = 1.0;
  {
    MockCostModel free_crossings(mc);
    PartitionOutcome o = run_search(g, backends, free_crossings);
    CHECK(describe(o.plan, g) == "byoc{r0} tvm{a} byoc{r1}");
    CHECK(o.plan.total_cost.number() == Approx(4.0));
    CHECK(o.plan.boundary_cost == Cost::zero());
    CHECK(o.plan.boundaries.size() == 2);   // listed even when free
  }
  mc.boundary_default = {0.75, 0.0};
  {
    // Two crossings cost 1.5 more: 5.5 against all-tvm's 6.0, the mix still wins.
    MockCostModel priced(mc);
    PartitionOutcome o = run_search(g, backends, priced);
    CHECK(describe(o.plan, g) == "byoc{r0} tvm{a} byoc{r1}");
    CHECK(o.plan.total_cost.number() == Approx(5.5));
    CHECK(o.plan.boundary_cost.number() == Approx(1.5));
  }
  mc.boundary_pairs["tvm->byoc"] = {2.5, 0.0};
  {
    // tvm->byoc is now dear: byoc{r0} tvm{a,r1} costs 1 + 4 + 0.75 = 5.75 < 6.0 (all tvm).
    MockCostModel dear(mc);
    PartitionOutcome o = run_search(g, backends, dear);
    CHECK(describe(o.plan, g) == "byoc{r0} tvm{a,r1}");
    CHECK(o.plan.total_cost.number() == Approx(5.75));
    REQUIRE(o.plan.boundaries.size() == 1);
    CHECK(o.plan.boundaries[0].from == "byoc");
    CHECK(o.plan.boundaries[0].to == "tvm");
  }
}

TEST_CASE("boundary costs: the mock file's boundaries section", "[cost][boundary]") {
  MockCosts m = parse_mock_costs(R"({"format": "tessera.mock_costs", "version": 1,
      "backends": {"a": {"per_op": 1}, "b": {"per_op": 1}},
      "boundaries": {"default": {"latency": 1.0},
                     "pairs": {"a->b": {"per_byte": 0.5}, "b->a": {"latency": 2.5, "per_byte": 0.001}}}})", "c.json");
  MockCostModel model(m);
  TensorType t{DType::f32, {10}};   // 40 bytes
  CHECK(model.boundary(t, "a", "a") == Cost::zero());
  CHECK(model.boundary(t, "a", "b").number() == Approx(20.0));     // latency absent: 0
  CHECK(model.boundary(t, "b", "a").number() == Approx(2.54));
  CHECK(model.boundary(t, "b", "c").number() == Approx(1.0));      // default
  MockCostModel none(parse_mock_costs(R"({"format": "tessera.mock_costs", "version": 1,
      "backends": {"a": {"per_op": 1}}})", "c.json"));
  CHECK(none.boundary(t, "a", "b") == Cost::zero());
  CHECK(none.fingerprint() != model.fingerprint());
  auto bad = [](const std::string& boundaries) {
    return parse_mock_costs(R"({"format": "tessera.mock_costs", "version": 1, "backends": {"a": {"per_op": 1}},
        "boundaries": )" + boundaries + "}", "c.json");
  };
  CHECK_THROWS_WITH(bad(R"({"pairs": {"ab": {}}})"), Catch::Contains("c.json") && Catch::Contains("/boundaries/pairs/ab"));
  CHECK_THROWS_WITH(bad(R"({"default": {"latency": -1}})"), Catch::Contains("/boundaries/default/latency"));
  CHECK_THROWS_WITH(bad(R"({"default": {"lat": 1}})"), Catch::Contains("/boundaries/default"));
  CHECK_THROWS_AS(bad(R"({"other": {}})"), UserError);
}
