// The verified choice's database key: a plan's end-to-end latency is persisted under it, so its
// value is pinned like the functions' keys (tests/ir/structural_hash_test.cc). Changing it orphans
// every recorded plan latency: a format break, needing a version bump and a migration note.
#include <catch2/catch.hpp>

#include "support/collage_graphs.h"
#include "tessera/mock_cost_model.h"
#include "tessera/verified_choice.h"

using namespace tessera;

TEST_CASE("the cost database key of a plan's end-to-end latency is pinned") {
  MockCosts costs;
  costs.file = "<pinned>";
  costs.backends["byoc"].per_op = 1.0;
  costs.backends["tvm"].per_op = 2.0;
  MockCostModel model(costs);
  const Graph g = tessera::testing::collage_diamond();   // r0 r1 a r2 s r3 out
  auto partition = [](const std::string& backend, IndexSet nodes) {
    Partition p;
    p.backend = backend;
    p.device = "cpu";
    p.nodes = std::move(nodes);
    return p;
  };
  Plan all_tvm, split;
  all_tvm.partitions.push_back(partition("tvm", IndexSet::all(g.num_nodes())));
  split.partitions.push_back(partition("byoc", IndexSet(g.num_nodes(), {0, 1, 3, 4, 5})));
  split.partitions.push_back(partition("tvm", IndexSet(g.num_nodes(), {2, 6})));
  CHECK(plan_latency_key(g, all_tvm, model).to_string() == "c9ad8f0635cfa6c6 plan cpu mock/1/952c4598182e867e");
  CHECK(plan_latency_key(g, split, model).to_string() == "1597a6c753b1fc20 plan cpu mock/1/952c4598182e867e");
}
