// Extraction of a SubGraph as a standalone function, and its structural identity.
#include <catch2/catch.hpp>
#include <cstring>

#include "partition/dataflow_index.h"
#include "ir/structural_hash.h"
#include "partition/sub_graph.h"
#include "partition/test_graphs.h"

using namespace tessera;
using tessera::testing::GraphBuilder;

namespace {

TensorData float_bytes(std::vector<float> v) {
  auto bytes = std::make_shared<TensorBytes>(v.size() * sizeof(float));
  std::memcpy(bytes->data(), v.data(), bytes->size());
  return bytes;
}

// x -> MatMul(x, W) -> Add(., c) -> Relu -> Abs -> out;  Relu's output is a graph output too.
Graph model(float weight_fill, float scalar) {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId w = b.weight("W");
  b.g.value(w).data = float_bytes(std::vector<float>(100, weight_fill));
  ValueId c = b.scalar("c");
  b.g.value(c).data = float_bytes({scalar});
  ValueId mm = b.op("MatMul", "mm", {x, w});
  ValueId add = b.op("Add", "add", {mm, c});
  ValueId relu = b.op("Relu", "relu", {add});
  b.output(b.op("Abs", "abs", {relu}));
  b.output(relu);
  return std::move(b.g);
}

}  // namespace

TEST_CASE("extract_function: arguments, constants, outputs", "[extract]") {
  Graph g = model(1.0f, 2.0f);
  DataflowIndex index(g);
  SubGraph s(index, IndexSet(index.size(), {0, 1, 2}));
  REQUIRE(g.value(g.find_value("W")).is_weight());
  REQUIRE(!g.value(g.find_value("c")).is_weight());

  CHECK(function_arguments(g, s) == std::vector<ValueId>{g.find_value("x"), g.find_value("W")});
  Graph fn = extract_function(g, s);
  CHECK(fn.name == "MatMul+Add+Relu");
  REQUIRE(fn.num_nodes() == 3);
  REQUIRE(fn.inputs.size() == 2);
  CHECK(fn.value(fn.inputs[0]).name == "x");
  CHECK(fn.value(fn.inputs[1]).name == "W");
  CHECK(fn.value(fn.inputs[1]).kind == ValueKind::Input);
  CHECK(fn.value(fn.inputs[1]).type == g.value(g.find_value("W")).type);
  const Value& c = fn.value(fn.node(1).inputs[1]);
  CHECK(c.is_constant());
  CHECK(c.data != nullptr);                      // a small constant keeps its value
  REQUIRE(fn.outputs.size() == 1);               // relu: read by abs outside and a graph output
  CHECK(fn.value(fn.outputs[0]).producer == 2);
  CHECK(fn.node(2).inputs[0] == fn.node(1).outputs[0]);   // wiring is internal

  // Outputs in ascending index order when several values leave.
  SubGraph two(index, IndexSet(index.size(), {0, 1}));
  Graph fn2 = extract_function(g, two);
  REQUIRE(fn2.outputs.size() == 1);
  CHECK(fn2.value(fn2.outputs[0]).name == "add");
}

TEST_CASE("extract_function: weights count by type, small constants by value", "[extract]") {
  Graph a = model(1.0f, 2.0f), b = model(5.0f, 2.0f), c = model(1.0f, 3.0f);
  DataflowIndex ia(a), ib(b), ic(c);
  auto fn = [](const Graph& g, const DataflowIndex& index) {
    return extract_function(g, SubGraph(index, IndexSet(index.size(), {0, 1, 2})));
  };
  CHECK(structural_hash(fn(a, ia)) == structural_hash(fn(b, ib)));
  CHECK(structurally_equal(fn(a, ia), fn(b, ib)));
  CHECK(structural_hash(fn(a, ia)) != structural_hash(fn(c, ic)));
  // Same ops on other nodes of one graph are another function only if the wiring differs.
  Graph f1 = extract_function(a, SubGraph(ia, IndexSet(ia.size(), {2})));
  Graph f2 = extract_function(a, SubGraph(ia, IndexSet(ia.size(), {3})));
  CHECK(structural_hash(f1) != structural_hash(f2));   // Relu vs Abs
}
