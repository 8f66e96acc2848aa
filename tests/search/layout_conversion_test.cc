// Layout conversions in the search (src/search/layout_conversions.h): where a 4-D value crosses from a
// backend of one boundary layout to one of the other, the plan pays the conversion once per
// (value, layout). The search must stay exact with these prices (collage == exhaustive on random
// DAGs), the plan's boundary_cost must be what a recount of its crossings gives, and a model that
// does not price layouts (mock) must see none of it.
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>

#include "backends/spec/backend_spec_detail.h"
#include "partition/test_graphs.h"
#include "search/plan_check.h"
#include "search/random_backends.h"
#include "search/search_fixture.h"
#include "support/graph_builder.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

// Mock costs for candidates; a conversion (a Transpose with explicit layouts; candidates at the
// graph's inputs and outputs carry layouts too, candidate_layouts.h) costs per_element times the
// value's size. Prices layouts, as the measured and roofline models do.
class LayoutPricedMock final : public CostModel {
 public:
  LayoutPricedMock(MockCosts costs, double per_element) : mock_(std::move(costs)), per_element_(per_element) {}
  bool prices_layouts() const override { return true; }
  std::string name() const override { return "test-layouts"; }
  std::string fingerprint() const override { return "test-layouts/" + std::to_string(per_element_); }
  mutable int conversions = 0;

 protected:
  Cost estimate_impl(const CostRequest& r) const override {
    if (!r.layouts || r.function->nodes.size() != 1 || r.function->nodes[0].op != "Transpose") return mock_.estimate(r);
    ++conversions;
    return Cost::value(per_element_ * double(r.function->value(r.function->inputs[0]).type.numel()));
  }
  void check_backends_impl(const std::vector<BackendRef>& b) const override { mock_.check_backends(b); }

 private:
  MockCostModel mock_;
  double per_element_;
};

// Every value of the random DAG becomes f32[1,4,3,3] (elementwise ops keep it): layout-sensitive.
void make_images(Graph& g) {
  for (Value& v : g.values) v.type = TensorType{DType::f32, {1, 4, 3, 3}};
}

// The rule written out from the plan: a value produced on backend A (a graph output too) pays
// per_element * size once per boundary layout L != layout(A) among the backends reading it.
double recount(const Plan& plan, const Graph& g, const std::map<std::string, Layout>& layout, double per_element) {
  double total = 0;
  for (const HandCrossing& c : hand_crossings(plan, g)) {
    std::set<Layout> wanted;
    for (const std::string& to : c.to)
      if (layout.at(to) != layout.at(c.from)) wanted.insert(layout.at(to));
    total += double(wanted.size()) * per_element * double(g.value(c.value).type.numel());
  }
  return total;
}

}  // namespace

TEST_CASE("layout conversions: collage equals exhaustive on 150 random DAGs, and the boundary cost recounts",
          "[search][random][layout]") {
  std::mt19937 rng(20261124);
  int priced = 0;
  for (int trial = 0; trial < 150; ++trial) {
    auto [n, g, backends, mc] = random_problem(rng, 10, false);
    if (trial % 2 == 0) add_read_output(rng, g);
    make_images(g);
    std::map<std::string, Layout> layout;
    for (BackendSpec& b : backends) {
      b.detail().boundary_layout = std::uniform_int_distribution<int>(0, 1)(rng) ? Layout::nhwc : Layout::plain;
      layout[b.name] = b.detail().boundary_layout;
    }
    const double per_element = std::uniform_real_distribution<double>(0.0, 0.08)(rng);
    LayoutPricedMock costs(mc, per_element);
    INFO("trial " << trial << ", " << n << " nodes, " << backends.size() << " backends, per element " << per_element);
    PartitionOutcome collage = run_search(g, backends, costs, "collage");
    PartitionOutcome exhaustive = run_search(g, backends, costs, "exhaustive", false);
    REQUIRE(collage.plan.total_cost.is_value());
    REQUIRE(collage.plan.total_cost.number() == Approx(exhaustive.plan.total_cost.number()).epsilon(1e-9));
    for (const PartitionOutcome* o : {&collage, &exhaustive}) {
      INFO(o->plan.search);
      REQUIRE_FALSE(check_plan(o->plan, *o->index, backends));
      REQUIRE(o->plan.boundary_cost.number() == Approx(recount(o->plan, g, layout, per_element)).margin(1e-9));
      double listed = 0;
      for (const Boundary& b : o->plan.boundaries) listed += b.cost.number();
      REQUIRE(listed == Approx(o->plan.boundary_cost.number()).margin(1e-9));
    }
    if (collage.plan.boundary_cost.number() > 0) ++priced;
  }
  CHECK(priced >= 20);   // the generator must produce plans that pay for conversions
}

TEST_CASE("layout conversions: a dear conversion keeps a cheap op on its neighbours' layout", "[search][layout]") {
  // x -> r0 -> a -> r1, tvm (nhwc) takes everything at 2 per op, byoc (plain) Relus at 1 per op.
  GraphBuilder b;
  b.output(b.op("Relu", "r1", {b.op("Abs", "a", {b.op("Relu", "r0", {b.input("x", {1, 4, 3, 3})}, {1, 4, 3, 3})}, {1, 4, 3, 3})},
                {1, 4, 3, 3}));
  std::vector<BackendSpec> backends{collage_backend("tvm", 1), collage_backend("byoc", 1)};
  backends[0].detail().boundary_layout = Layout::nhwc;
  MockCosts mc;
  mc.file = "<test>";
  mc.backends["tvm"] = {2.0, 1.0};
  mc.backends["byoc"] = {1.0, 1.0};
  {
    LayoutPricedMock cheap(mc, 0.01);   // 0.36 per conversion: byoc{r0} tvm{a} byoc{r1} = 4.72 < 6
    PartitionOutcome o = run_search(b.g, backends, cheap);
    CHECK(describe(o.plan, b.g) == "byoc{r0} tvm{a} byoc{r1}");
    CHECK(o.plan.boundary_cost.number() == Approx(0.72));
    CHECK(cheap.conversions == 2);   // plain->nhwc and nhwc->plain of one shape
  }
  {
    LayoutPricedMock dear(mc, 0.05);   // 1.8 per conversion: all tvm (6) beats 4 + 3.6
    PartitionOutcome o = run_search(b.g, backends, dear);
    CHECK(describe(o.plan, b.g) == "tvm{r0,a,r1}");
    CHECK(o.plan.boundary_cost == Cost::zero());
  }
  {
    MockCostModel mock(mc);   // mock prices no layouts: the mix is free
    PartitionOutcome o = run_search(b.g, backends, mock);
    CHECK(describe(o.plan, b.g) == "byoc{r0} tvm{a} byoc{r1}");
    CHECK(o.plan.boundary_cost == Cost::zero());
  }
}

TEST_CASE("layout conversions: one conversion per layout, however many backends of it read the value", "[search][layout]") {
  // a = Abs(x) on tvm (nhwc) read by a Relu that only byoc takes and a Sigmoid that only byoc2
  // takes, both plain: the executor converts `a` once, and so the plan pays once.
  GraphBuilder b;
  const ValueId a = b.op("Abs", "a", {b.input("x", {1, 4, 3, 3})}, {1, 4, 3, 3});
  b.output(b.op("Relu", "r", {a}, {1, 4, 3, 3}));
  b.output(b.op("Sigmoid", "s", {a}, {1, 4, 3, 3}));
  std::vector<BackendSpec> backends{collage_backend("tvm", 1), collage_backend("byoc", 1), collage_backend("byoc", 1)};
  backends[0].detail().boundary_layout = Layout::nhwc;
  for (BackendSpec& s : backends) s.all_ops = false;
  backends[0].ops = {"Abs"};
  backends[1].ops = {"Relu"};
  backends[2].name = "byoc2";
  backends[2].ops = {"Sigmoid"};
  for (BackendSpec& s : backends) s.detail().patterns.clear();
  MockCosts mc;
  mc.file = "<test>";
  for (const char* name : {"tvm", "byoc", "byoc2"}) mc.backends[name] = {1.0, 1.0};
  LayoutPricedMock costs(mc, 0.01);
  PartitionOutcome o = run_search(b.g, backends, costs);
  CHECK(describe(o.plan, b.g) == "tvm{a} byoc{r} byoc2{s}");
  CHECK(o.plan.boundary_cost.number() == Approx(0.36));
  REQUIRE(o.plan.boundaries.size() == 2);   // both crossings listed, one of them priced
  CHECK(o.plan.boundaries[0].cost.number() + o.plan.boundaries[1].cost.number() == Approx(0.36));
}
