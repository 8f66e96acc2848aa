// Measured wholes (src/search/measured_wholes.h): a coalesced partition is priced as the one function
// it runs as and offered back to the search. With the mock model a whole of k Relus costs less
// than its k one-node candidates (decay applies across the whole), so the second round must pick
// it, and the plan's cost must be the whole's price.
#include <catch2/catch.hpp>

#include <functional>

#include "search/plan_check.h"
#include "search/search_fixture.h"
#include "support/graph_builder.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

Graph relu_chain() {
  GraphBuilder b;
  b.output(b.op("Relu", "r2", {b.op("Relu", "r1", {b.op("Relu", "r0", {b.input("x")})})}));
  return std::move(b.g);
}

PartitionOutcome partition(const Graph& g, const std::vector<BackendSpec>& backends, const CostModel& model,
                           bool wholes, const std::string& search = "collage") {
  PartitionOptions options;
  options.model_path = "test";
  options.search = search;
  options.measure_wholes = wholes;
  return partition_graph(g, backends, model, options);
}

// Prices a function by `price(node count, backend)`.
class CountCostModel final : public CostModel {
 public:
  CountCostModel(std::string name, std::function<Cost(double, const std::string&)> price)
      : name_(std::move(name)), price_(std::move(price)) {}
  std::string name() const override { return name_; }
  std::string fingerprint() const override { return name_ + "/1"; }

 protected:
  Cost estimate_impl(const CostRequest& r) const override {
    return price_(static_cast<double>(r.function->nodes.size()), r.backend);
  }

 private:
  std::string name_;
  std::function<Cost(double, const std::string&)> price_;
};

// Its node count squared: one Relu 1, three as one function 9. A whole is dearer than its parts,
// as a big function streaming through memory can be against parts timed with their data in cache.
CountCostModel square_costs() {
  return CountCostModel("square", [](double n, const std::string& b) { return Cost::value(n * n * (b == "byoc" ? 1.0 : 5.0)); });
}

// One Relu at 1, and any function of more than one node refused, as a backend refuses a union it
// cannot compile as one function (xnnpack and a Reshape whose NCHW result is read inside).
CountCostModel one_node_costs() {
  return CountCostModel("one-node", [](double n, const std::string& b) {
    return n > 1 ? Cost::invalid("cannot compile a union") : Cost::value(b == "byoc" ? 1.0 : 5.0);
  });
}

}  // namespace

TEST_CASE("measured wholes: parts that coalesce into a dearer whole are charged the whole", "[search][wholes]") {
  Graph g = relu_chain();
  std::vector<BackendSpec> backends{collage_backend("byoc", 1), collage_backend("tvm", 1)};
  CountCostModel model = square_costs();
  // Without wholes the plan claims the parts' sum; with them it claims what it runs: the search,
  // which prices parts, still picks the three byoc Relus, they still coalesce into one function,
  // and that function costs 9. (byoc, tvm, byoc would run for 7: the relaxation's blind spot,
  // which the plan's total now shows instead of hiding.)
  PartitionOutcome parts = partition(g, backends, model, false);
  REQUIRE(parts.plan.partitions.size() == 1);
  CHECK(parts.plan.total_cost.number() == Approx(3.0));
  PartitionOutcome whole = partition(g, backends, model, true);
  REQUIRE(whole.plan.partitions.size() == 1);
  const Partition& p = whole.plan.partitions[0];
  REQUIRE(p.candidates.size() == 1);
  CHECK(p.candidates[0].rule == "byoc.whole");
  CHECK(p.nodes == parts.plan.partitions[0].nodes);
  CHECK(p.cost.number() == Approx(9.0));
  CHECK(whole.plan.total_cost.number() == Approx(9.0));
  CHECK_FALSE(check_plan(whole.plan, *whole.index, backends));
}

TEST_CASE("measured wholes: a coalesced partition priced as one function replaces its parts", "[search][wholes]") {
  Graph g = relu_chain();
  // max_depth 1: the rules propose single Relus only; coalescing makes one byoc partition.
  std::vector<BackendSpec> backends{collage_backend("byoc", 1), collage_backend("tvm", 1)};
  MockCostModel model = mock_costs({{"byoc", 1.0}, {"tvm", 5.0}});

  PartitionOutcome parts = partition(g, backends, model, false);
  REQUIRE(parts.plan.partitions.size() == 1);
  CHECK(parts.plan.partitions[0].candidates.size() == 3);
  CHECK(parts.plan.total_cost.number() == Approx(3.0));
  CHECK(parts.plan.stats.wholes == 0);

  PartitionOutcome whole = partition(g, backends, model, true);
  REQUIRE(whole.plan.partitions.size() == 1);
  const Partition& p = whole.plan.partitions[0];
  REQUIRE(p.candidates.size() == 1);
  CHECK(p.candidates[0].rule == "byoc.whole");
  CHECK(p.cost.number() == Approx(1.0 + 0.9 + 0.81));
  CHECK(whole.plan.total_cost.number() == Approx(2.71));
  CHECK(whole.plan.stats.wholes == 1);
  CHECK_FALSE(check_plan(whole.plan, *whole.index, backends));
  // A second run gives the same plan (deterministic), and exhaustive agrees on the augmented problem.
  CHECK(plan_to_json_text(partition(g, backends, model, true).plan, g) == plan_to_json_text(whole.plan, g));
  CHECK(partition(g, backends, model, true, "exhaustive").plan.total_cost.number() == Approx(2.71));
}

TEST_CASE("measured wholes: a whole the rules already propose is not priced twice", "[search][wholes]") {
  Graph g = relu_chain();
  // max_depth 3: byoc's own fusion already proposes {r0,r1,r2}; the search picks it directly.
  std::vector<BackendSpec> backends{collage_backend("byoc", 3), collage_backend("tvm", 1)};
  MockCostModel model = mock_costs({{"byoc", 1.0}, {"tvm", 5.0}});
  PartitionOutcome o = partition(g, backends, model, true);
  REQUIRE(o.plan.partitions.size() == 1);
  CHECK(o.plan.partitions[0].candidates.size() == 1);
  CHECK(o.plan.stats.wholes == 0);
  CHECK(o.plan.total_cost.number() == Approx(2.71));
}

TEST_CASE("measured wholes: parts whose whole does not compile stay functions of their own", "[search][wholes]") {
  Graph g = relu_chain();
  std::vector<BackendSpec> backends{collage_backend("byoc", 1), collage_backend("tvm", 1)};
  CountCostModel model = one_node_costs();
  // Without wholes the three byoc Relus coalesce into one function the backend would refuse (at
  // run time: ref kernels). With them the whole is priced invalid and the plan keeps the parts.
  PartitionOutcome parts = partition(g, backends, model, false);
  REQUIRE(parts.plan.partitions.size() == 1);
  PartitionOutcome split = partition(g, backends, model, true);
  REQUIRE(split.plan.partitions.size() == 3);
  for (const Partition& p : split.plan.partitions) {
    CHECK(p.backend == "byoc");
    CHECK(p.nodes.count() == 1);
    CHECK(p.cost.number() == Approx(1.0));
  }
  CHECK(split.plan.total_cost.number() == Approx(3.0));
  CHECK_FALSE(check_plan(split.plan, *split.index, backends));
}
