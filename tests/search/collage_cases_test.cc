// Collage's own partition tests (TVM tests/python/relay/collage/test_collage_partitioner.py),
// re-expressed with tessera's built-in tvm and byoc backends, mock costs and 10x10 f32 tensors.
#include <catch2/catch.hpp>

#include "partition/test_graphs.h"
#include "search/plan_check.h"
#include "support/collage_graphs.h"
#include "search/search_fixture.h"

using namespace tessera;
using namespace tessera::testing;

TEST_CASE("a single Relu goes to the cheaper backend", "[search][collage]") {
  GraphBuilder b;
  b.output(b.op("Relu", "r", {b.input("x")}));
  std::vector<BackendSpec> backends{collage_backend("tvm", 8), collage_backend("byoc", 8)};
  auto byoc_cheaper = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  auto tvm_cheaper = mock_costs({{"tvm", 1.0}, {"byoc", 2.0}});
  PartitionOutcome a = run_search(b.g, backends, byoc_cheaper);
  CHECK(describe(a.plan, b.g) == "byoc{r}");
  CHECK(a.plan.total_cost == Cost::value(1.0));
  PartitionOutcome c = run_search(b.g, backends, tvm_cheaper);
  CHECK(describe(c.plan, b.g) == "tvm{r}");
  CHECK(c.plan.partitions[0].function == "tvmgen_default_tvm_main_0");
}

TEST_CASE("relu-abs-relu-add: byoc{r0} tvm{a} byoc{r1,out} at 4.9", "[search][collage]") {
  const Graph g = collage_chain();
  std::vector<BackendSpec> backends{collage_backend("tvm", 1), collage_backend("byoc", 3)};
  auto costs = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  for (std::string search : {"collage", "exhaustive"}) {
    PartitionOutcome out = run_search(g, backends, costs, search);
    INFO(search);
    CHECK(describe(out.plan, g) == "byoc{r0} tvm{a} byoc{r1,out}");
    CHECK(out.plan.total_cost.number() == Approx(4.9).epsilon(1e-12));
    CHECK_FALSE(check_plan(out.plan, *out.index, backends));
  }
}

TEST_CASE("byoc fuses five nodes because fusion beats five tvm calls: 34.5706", "[search][collage]") {
  const Graph g = collage_diamond();
  std::vector<BackendSpec> backends{collage_backend("tvm", 1), collage_backend("byoc", 5)};
  auto costs = mock_costs({{"tvm", 5.0}, {"byoc", 6.0}});
  for (std::string search : {"collage", "exhaustive"}) {
    PartitionOutcome out = run_search(g, backends, costs, search);
    INFO(search);
    CHECK(describe(out.plan, g) == "tvm{a} byoc{r0,r1,r2,s,r3} tvm{out}");
    CHECK(out.plan.total_cost.number() == Approx(34.5706).epsilon(1e-12));
    REQUIRE(out.plan.partitions.size() == 3);
    CHECK(out.plan.partitions[1].cost.number() == Approx(6 * 4.0951).epsilon(1e-12));
  }
}

// The case Collage's "candidates containing the first uncovered node" rule misses once candidates
// must be ready (inputs covered): a=Relu(x), p=Abs(x), m=Add(a, p). The best plan is f{a,m} ref{p},
// but {a,m} holds the first node and is not ready at {}: p must go first.
TEST_CASE("the best plan may need a partition above the first uncovered node first", "[search][collage]") {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId a = b.op("Relu", "a", {x});
  ValueId p = b.op("Abs", "p", {x});
  b.output(b.op("Add", "m", {a, p}));
  BackendSpec f = parse_backend_spec(
      R"({"format": "tessera.backend", "version": 1, "name": "f", "ops": ["Relu", "Add"],
          "fusion": "arbitrary", "max_depth": 0, "max_exits": 1})",
      "f.json");
  std::vector<BackendSpec> backends{builtin_backend_spec("ref"), f};
  MockCosts mc;
  mc.backends["ref"].per_op = 10.0;
  mc.backends["f"].per_op = 4.0;
  mc.backends["f"].decay = 0.5;
  mc.backends["f"].overhead = 3.0;   // f{a,m} = 3 + 4 + 2 = 9 < f{a} + f{m} = 14
  MockCostModel costs(mc);
  PartitionOutcome out = run_search(b.g, backends, costs);
  CHECK(describe(out.plan, b.g) == "ref{p} f{a,m}");
  CHECK(out.plan.total_cost.number() == Approx(19.0));
  PartitionOutcome ex = run_search(b.g, backends, costs, "exhaustive");
  CHECK(ex.plan.total_cost.number() == Approx(19.0));
}

TEST_CASE("coalescing merges touching partitions of one backend, --no-coalesce keeps them", "[search][coalesce]") {
  GraphBuilder b;
  ValueId r0 = b.op("Relu", "r0", {b.input("x")});
  ValueId r1 = b.op("Relu", "r1", {r0});
  b.output(b.op("Relu", "r2", {r1}));
  // byoc max_depth 2: {r0,r1} + {r2} (or {r0} + {r1,r2}); coalesced into one partition.
  std::vector<BackendSpec> backends{collage_backend("byoc", 2)};
  auto costs = mock_costs({{"byoc", 1.0}});
  PartitionOutcome merged = run_search(b.g, backends, costs);
  CHECK(describe(merged.plan, b.g) == "byoc{r0,r1,r2}");
  CHECK(merged.plan.partitions[0].candidates.size() == 2);
  PartitionOutcome apart = run_search(b.g, backends, costs, "collage", false);
  CHECK(apart.plan.partitions.size() == 2);
  CHECK(merged.plan.total_cost == apart.plan.total_cost);
}

TEST_CASE("greedy and single:<backend> produce valid plans", "[search][greedy]") {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId r0 = b.op("Relu", "r0", {x});
  ValueId a = b.op("Abs", "a", {r0});
  b.output(b.op("Add", "out", {a, r0}));
  std::vector<BackendSpec> backends{collage_backend("byoc", 3), collage_backend("tvm", 1)};
  auto costs = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  PartitionOutcome g = run_search(b.g, backends, costs, "greedy");
  CHECK_FALSE(check_plan(g.plan, *g.index, backends));
  CHECK(g.plan.partitions.front().backend == "byoc");
  PartitionOutcome s = run_search(b.g, backends, costs, "single:byoc");
  CHECK_FALSE(check_plan(s.plan, *s.index, backends));
  CHECK(describe(s.plan, b.g) == "byoc{r0} tvm{a} byoc{out}");
}
