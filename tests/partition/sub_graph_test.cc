// SubGraph: entries, exits, inputs, outputs, depth, kind, label, taps, convexity, validity
// reasons, touching and union, on small hand-built graphs.
#include <catch2/catch.hpp>

#include "partition/dataflow_index.h"
#include "partition/sub_graph.h"
#include "support/collage_graphs.h"
#include "partition/test_graphs.h"

using namespace tessera;
using tessera::testing::GraphBuilder;
using tessera::testing::collage_chain;
using tessera::testing::collage_diamond;

namespace {

SubGraph sub(const DataflowIndex& index, std::initializer_list<int> nodes) {
  return SubGraph(index, IndexSet(index.size(), nodes));
}

}  // namespace

TEST_CASE("DataflowIndex producers, consumers and reachability", "[sub_graph]") {
  Graph g = collage_diamond();
  DataflowIndex index(g);
  CHECK(index.producers(4) == std::vector<NodeId>{1, 3});
  CHECK(index.consumers(0) == std::vector<NodeId>{1});
  CHECK(index.downstream(0).members() == std::vector<int>{1, 4, 5, 6});
  CHECK(index.upstream(4).members() == std::vector<int>{0, 1, 2, 3});
  CHECK(index.reaches(2, 6));
  CHECK(!index.reaches(1, 3));
  CHECK(index.feeds_graph_output(6));
  CHECK(!index.feeds_graph_output(5));
  CHECK(index.kind(4) == OpKind::Broadcast);
}

TEST_CASE("SubGraph of a single op", "[sub_graph]") {
  Graph g = collage_diamond();
  DataflowIndex index(g);
  SubGraph s = sub(index, {4});
  CHECK(s.entries().members() == std::vector<int>{4});
  CHECK(s.exits().members() == std::vector<int>{4});
  CHECK(s.inputs() == std::vector<ValueId>{g.node(1).outputs[0], g.node(3).outputs[0]});
  CHECK(s.outputs() == g.node(4).outputs);
  CHECK(s.depth() == 1);
  CHECK(s.kind() == OpKind::Broadcast);
  CHECK(s.label() == "Add");
  CHECK(s.taps().empty());
  CHECK(s.is_convex());
  CHECK(s.is_weakly_connected());
  CHECK(!s.check({}).has_value());
}

TEST_CASE("Two independent adds: two entries, two exits, not connected", "[sub_graph]") {
  GraphBuilder b;
  ValueId x = b.input("x"), y = b.input("y");
  b.output(b.op("Add", "a1", {x, y}));
  b.output(b.op("Add", "a2", {x, y}));
  DataflowIndex index(b.g);
  SubGraph s = sub(index, {0, 1});
  CHECK(s.entries().count() == 2);
  CHECK(s.exits().count() == 2);
  CHECK(s.inputs() == std::vector<ValueId>{x, y});
  CHECK(s.outputs().size() == 2);
  CHECK(s.depth() == 1);
  CHECK(s.is_convex());
  CHECK(!s.is_weakly_connected());
  CHECK(s.check({0, 0, false}) == "not weakly connected");
}

TEST_CASE("Diamond: depth, kind, label, exits, convexity", "[sub_graph]") {
  Graph g = collage_diamond();
  DataflowIndex index(g);
  SubGraph body = sub(index, {0, 1, 2, 3, 4, 5});
  CHECK(body.depth() == 4);          // r0 -> r1 -> s -> r3
  CHECK(body.kind() == OpKind::Broadcast);
  CHECK(body.label() == "Relu+Relu+Abs+Relu+Add+Relu");
  CHECK(body.entries().members() == std::vector<int>{0, 2});
  CHECK(body.exits().members() == std::vector<int>{5});
  CHECK(body.inputs() == std::vector<ValueId>{g.inputs[0]});   // x once, though read twice
  CHECK(body.is_convex());
  CHECK(!body.check({4, 1, false}).has_value());
  CHECK(body.check({3, 1, false}) == "depth 4, max 3");

  SubGraph whole = sub(index, {0, 1, 2, 3, 4, 5, 6});
  CHECK(whole.exits().members() == std::vector<int>{6});   // a graph output is an exit
  CHECK(whole.depth() == 5);

  SubGraph two_branches = sub(index, {0, 1, 2, 3});
  CHECK(two_branches.exits().members() == std::vector<int>{1, 3});
  CHECK(two_branches.check({0, 1, false}) == "not weakly connected");   // reported first
  SubGraph joined = sub(index, {0, 1, 2, 3, 4});
  CHECK(joined.exits().members() == std::vector<int>{4});
  SubGraph fork = sub(index, {2, 3, 4});                   // a r2 s: s exits; r1 is outside
  CHECK(!fork.check({0, 1, false}).has_value());
}

TEST_CASE("A set that leaves and re-enters is not convex; its closure is", "[sub_graph]") {
  Graph g = collage_diamond();
  DataflowIndex index(g);
  CHECK(!sub(index, {1, 5}).is_convex());             // r1 -> s (outside) -> r3
  SubGraph hole = sub(index, {0, 1, 2, 3, 5});        // both branches and r3, without s
  CHECK(!hole.is_convex());
  SubGraph closure = sub(index, {0, 1, 2, 3, 4, 5});
  CHECK(closure.is_convex());
  CHECK(!closure.check({0, 1, false}).has_value());
}

TEST_CASE("Convexity rejection for a connected set", "[sub_graph]") {
  // x -> p -> q -> r and p -> r: {p, r} is connected (p feeds r directly) but not convex,
  // because p -> q -> r leaves and comes back; {p, q, r} is its convex closure.
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId p = b.op("Relu", "p", {x});
  ValueId q = b.op("Abs", "q", {p});
  b.output(b.op("Add", "r", {p, q}));
  DataflowIndex index(b.g);
  SubGraph s = sub(index, {0, 2});
  CHECK(s.is_weakly_connected());
  CHECK(!s.is_convex());
  CHECK(s.check({}) == "not convex");
  SubGraph closed = sub(index, {0, 1, 2});
  CHECK(!closed.check({}).has_value());
  CHECK(closed.depth() == 3);
}

TEST_CASE("Taps: an exit that also feeds inside", "[sub_graph]") {
  Graph g = collage_chain();
  DataflowIndex index(g);
  SubGraph s = sub(index, {1, 2});   // a, r1; a also feeds out (outside)
  CHECK(s.exits().members() == std::vector<int>{1, 2});
  CHECK(s.taps().members() == std::vector<int>{1});
  CHECK(s.check({0, 2, false}) == "1 tap, none allowed");
  CHECK(!s.check({0, 2, true}).has_value());
  CHECK(s.check({0, 1, true}) == "2 exits, max 1");
  SubGraph all = sub(index, {0, 1, 2, 3});
  CHECK(all.taps().empty());
  CHECK(all.exits().members() == std::vector<int>{3});
}

TEST_CASE("Touching and disjoint union", "[sub_graph]") {
  Graph g = collage_chain();
  DataflowIndex index(g);
  CHECK(touches(sub(index, {0}), sub(index, {1})));
  CHECK(touches(sub(index, {1}), sub(index, {0})));
  CHECK(!touches(sub(index, {0}), sub(index, {0, 1})));     // overlap
  CHECK(!touches(sub(index, {0}), sub(index, {2})));        // no edge between them
  // {a} and {out}: a feeds out directly, but the union {a, out} skips r1 on a -> r1 -> out.
  CHECK(!touches(sub(index, {1}), sub(index, {3})));
  CHECK(touches(sub(index, {1, 2}), sub(index, {3})));
  SubGraph u = disjoint_union(sub(index, {0}), sub(index, {1, 2}));
  CHECK(u.inside().members() == std::vector<int>{0, 1, 2});
  CHECK(u.label() == "Relu+Abs+Relu");
}
