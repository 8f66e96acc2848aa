// Sandwiches (src/search/sandwiches.h): a one-node partition whose neighbours all sit on one other
// backend X is found, and the search with those nodes kept on X covers them there.
#include <catch2/catch.hpp>

#include "search/sandwiches.h"
#include "search/search_fixture.h"
#include "support/graph_builder.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

// byoc runs every op for 1 but Add for 5; tvm runs Add for 1 and the rest for 5 (by op: functions
// are priced by structure, names do not count). The cheapest plan of Relu -> Add -> Relu puts the
// Add alone on tvm between two byoc partitions.
class PickyCostModel final : public CostModel {
 public:
  std::string name() const override { return "picky"; }
  std::string fingerprint() const override { return "picky/1"; }

 protected:
  Cost estimate_impl(const CostRequest& r) const override {
    double total = 0;
    for (const Node& n : r.function->nodes) total += (n.op == "Add") == (r.backend == "tvm") ? 1.0 : 5.0;
    return Cost::value(total);
  }
};

PartitionOutcome partition(const Graph& g, const std::vector<BackendSpec>& backends, const CostModel& model,
                           const std::map<NodeId, std::string>& sandwiched = {}) {
  PartitionOptions options;
  options.model_path = "test";
  if (!sandwiched.empty())
    options.allow = [&](const SearchProblem& p) { return allow_without_sandwiches(p, sandwiched); };
  return partition_graph(g, backends, model, options);
}

}  // namespace

TEST_CASE("sandwiches: a lone node between partitions of one backend is found and kept there on request", "[search]") {
  GraphBuilder b;
  const ValueId r0 = b.op("Relu", "r0", {b.input("x")});
  b.output(b.op("Relu", "r2", {b.op("Add", "r1", {r0, r0})}));
  const Graph g = b.g;
  const std::vector<BackendSpec> backends{collage_backend("byoc", 1), collage_backend("tvm", 1)};
  PickyCostModel model;

  PartitionOutcome cheapest = partition(g, backends, model);
  REQUIRE(describe(cheapest.plan, g) == "byoc{r0} tvm{r1} byoc{r2}");
  const std::map<NodeId, std::string> sandwiched = sandwiched_nodes(g, cheapest.plan.partitions);
  CHECK(sandwiched == std::map<NodeId, std::string>{{1, "byoc"}});

  PartitionOutcome merged = partition(g, backends, model, sandwiched);
  CHECK(describe(merged.plan, g) == "byoc{r0,r1,r2}");
  CHECK(merged.plan.total_cost.number() == Approx(7.0));

  // Neighbours on two backends: no sandwich. A plan of one partition: none either.
  std::vector<Partition> mixed = cheapest.plan.partitions;
  mixed.back().backend = "ref";
  CHECK(sandwiched_nodes(g, mixed).empty());
  CHECK(sandwiched_nodes(g, merged.plan.partitions).empty());
}
