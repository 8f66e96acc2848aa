// Constant folding at import (src/frontend/constant_folding.h): shape arithmetic as exporters write
// it (torch's expand(n, -1, -1), Swin's window padding) is evaluated by ref's kernels, interleaved
// with ONNX's inference, until only the nodes that compute on the model's inputs remain, with
// static shapes. What cannot fold stays a node; what leaves a shape unknown is a one-line error.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstring>

#include "tessera/error.h"
#include "frontend/json_graph.h"

namespace tessera::folding_test {

using nlohmann::json;

ImportOptions quiet() { return ImportOptions{.warn = [](const std::string&) {}}; }

json node(const std::string& name, const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
          json attrs = json::object()) {
  return {{"name", name}, {"op", op}, {"inputs", in}, {"outputs", out}, {"attrs", attrs}};
}

json i64(const std::string& name, std::vector<int64_t> shape, std::vector<int64_t> data) {
  return {{"name", name}, {"dtype", "i64"}, {"shape", shape}, {"data", data}};
}

// Inputs and constants as vectors: a braced list of one json is an array for every compiler (as a
// json parameter, `{x}` is x itself for one and an array for another).
json graph(std::vector<json> inputs, std::vector<json> constants, json nodes, std::vector<std::string> outputs) {
  return {{"format", "tessera.graph"}, {"version", 1}, {"name", "folding"}, {"opset", 17}, {"inputs", inputs},
          {"constants", constants}, {"nodes", nodes}, {"outputs", outputs}};
}

json input(const std::string& name, const std::string& dtype, std::vector<int64_t> shape) {
  return {{"name", name}, {"dtype", dtype}, {"shape", shape}};
}

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes) out.push_back(n.op);
  return out;
}

std::vector<int64_t> ints(const Value& v) {
  REQUIRE(v.is_constant());
  REQUIRE(v.data);
  REQUIRE(v.type.dtype == DType::i64);
  std::vector<int64_t> out(static_cast<size_t>(v.type.numel()));
  std::memcpy(out.data(), v.data->data(), out.size() * 8);
  return out;
}

// The batch size read from x's shape, as torch writes `t.expand(x.shape[0], -1, -1)`.
json batch_of(const std::string& x) {
  return json::array({node("shape", "Shape", {x}, {"s"}), node("batch", "Gather", {"s", "zero"}, {"n"}, {{"axis", 0}}),
                      node("unsq", "Unsqueeze", {"n", "axis0"}, {"n1"})});
}


TEST_CASE("torch's expand(n, -1, -1): Shape, Gather, Concat, Equal, Where fold; Expand is typed", "[frontend]") {
  json nodes = batch_of("x");
  for (json n : {node("target", "Concat", {"n1", "minus1", "minus1"}, {"c"}, {{"axis", 0}}),
                 node("is_minus1", "Equal", {"c", "minus1"}, {"eq"}),
                 node("ones", "ConstantOfShape", {"three"}, {"o"},
                      {{"value", {{"dtype", "i64"}, {"shape", {1}}, {"data", {1}}}}}),
                 node("pick", "Where", {"eq", "o", "c"}, {"w"}), node("expand", "Expand", {"t", "w"}, {"e"}),
                 node("cat", "Concat", {"e", "x"}, {"y"}, {{"axis", 1}})})
    nodes.push_back(n);
  json j = graph({input("x", "f32", {2, 4, 8}), input("t", "f32", {1, 1, 8})},
                 {i64("zero", {}, {0}), i64("axis0", {1}, {0}), i64("minus1", {1}, {-1}), i64("three", {1}, {3})},
                 nodes, {"y"});
  Graph g = graph_from_json(j, "expand.json", quiet());
  CHECK(ops(g) == std::vector<std::string>{"Expand", "Concat"});
  CHECK(ints(g.value(g.nodes[0].inputs[1])) == std::vector<int64_t>{2, 1, 1});
  CHECK(g.value(g.nodes[0].outputs[0]).type.shape == Shape{2, 1, 8});
  CHECK(g.value(g.outputs[0]).type.shape == Shape{2, 5, 8});
}

TEST_CASE("Swin's window padding: pads computed with Mod and Sub fold; Pad is typed", "[frontend]") {
  // pad = (4 - W % 4) % 4 on axis 1 and 2 of x: 1x10x10x16 -> 1x12x12x16.
  json nodes = {node("shape", "Shape", {"x"}, {"s"}), node("w", "Gather", {"s", "one"}, {"wd"}, {{"axis", 0}}),
                node("mod", "Mod", {"wd", "four"}, {"r"}), node("sub", "Sub", {"four", "r"}, {"p"}),
                node("mod2", "Mod", {"p", "four"}, {"pad"}), node("unsq", "Unsqueeze", {"pad", "axis0"}, {"pad1"}),
                node("pads", "Concat", {"zero1", "zero1", "zero1", "zero1", "zero1", "pad1", "pad1", "zero1"}, {"pp"},
                     {{"axis", 0}}),
                node("cast", "Cast", {"pp"}, {"pc"}, {{"to", 7}}), node("pad", "Pad", {"x", "pc"}, {"y"})};
  json j = graph({input("x", "f32", {1, 10, 10, 16})},
                 {i64("one", {}, {1}), i64("four", {}, {4}), i64("axis0", {1}, {0}), i64("zero1", {1}, {0})}, nodes,
                 {"y"});
  Graph g = graph_from_json(j, "pad.json", quiet());
  CHECK(ops(g) == std::vector<std::string>{"Pad"});
  CHECK(ints(g.value(g.nodes[0].inputs[1])) == std::vector<int64_t>{0, 0, 0, 0, 0, 2, 2, 0});
  CHECK(g.value(g.outputs[0]).type.shape == Shape{1, 12, 12, 16});
}

TEST_CASE("Range, ScatterND and Slice on folded values fold; a Reshape's target follows", "[frontend]") {
  // r = Range(0, W, 1) = [0..5]; ScatterND writes 9 at index 2; Slice keeps [1:4]; their sum is
  // the Reshape's first dimension, computed entirely at import.
  json nodes = {node("shape", "Shape", {"x"}, {"s"}), node("w", "Gather", {"s", "one"}, {"wd"}, {{"axis", 0}}),
                node("range", "Range", {"zero", "wd", "one"}, {"r"}),
                node("scatter", "ScatterND", {"r", "idx", "nine"}, {"sc"}),
                node("slice", "Slice", {"sc", "start", "stop"}, {"sl"}),
                node("sum", "ReduceSum", {"sl", "axis0"}, {"total"}, {{"keepdims", 1}}),
                node("target", "Concat", {"total", "minus1"}, {"t"}, {{"axis", 0}}),
                node("reshape", "Reshape", {"y0", "t"}, {"y"})};
  json j = graph({input("x", "f32", {1, 6}), input("y0", "f32", {13, 2})},
                 {i64("zero", {}, {0}), i64("one", {}, {1}), i64("idx", {1, 1}, {2}), i64("nine", {1}, {9}),
                  i64("start", {1}, {1}), i64("stop", {1}, {4}), i64("axis0", {1}, {0}), i64("minus1", {1}, {-1})},
                 nodes, {"y"});
  Graph g = graph_from_json(j, "range.json", quiet());
  CHECK(ops(g) == std::vector<std::string>{"Reshape"});
  CHECK(ints(g.value(g.nodes[0].inputs[1])) == std::vector<int64_t>{13, -1});   // 1 + 9 + 3
  CHECK(g.value(g.outputs[0]).type.shape == Shape{13, 2});
}

TEST_CASE("floats fold too; outputs past kMaxFoldElements and shape-only constants stay nodes", "[frontend]") {
  json half = {{"name", "half"}, {"dtype", "f32"}, {"shape", {2}}, {"data", {0.5, 0.25}}};
  json w = {{"name", "w"}, {"dtype", "f32"}, {"shape", {2}}};   // shape-only: no data
  json nodes = {node("twice", "Add", {"half", "half"}, {"h2"}), node("add", "Add", {"x", "h2"}, {"y"}),
                node("big", "ConstantOfShape", {"big_shape"}, {"z"}), node("wneg", "Neg", {"w"}, {"wn"}),
                node("addw", "Add", {"x", "wn"}, {"yw"})};
  json j = graph({input("x", "f32", {2})}, {half, w, i64("big_shape", {2}, {128, 64})}, nodes, {"y", "z", "yw"});
  Graph g = graph_from_json(j, "floats.json", quiet());
  CHECK(ops(g) == std::vector<std::string>{"Add", "ConstantOfShape", "Neg", "Add"});
  const Value& h2 = g.value(g.nodes[0].inputs[1]);
  REQUIRE(h2.is_constant());
  REQUIRE(h2.data);
  float v[2];
  std::memcpy(v, h2.data->data(), 8);
  CHECK(v[0] == 1.0f);
  CHECK(v[1] == 0.5f);
  CHECK(g.value(g.nodes[1].outputs[0]).type.shape == Shape{128, 64});   // typed, not folded
}

TEST_CASE("a node whose kernel refuses its constant inputs stays, for run to report", "[frontend]") {
  // ONNX's inference does not look at ScatterND's indices; ref's kernel finds 5 out of range.
  json nodes = {node("scatter", "ScatterND", {"table", "five", "nine"}, {"s"}), node("add", "Add", {"x", "s"}, {"y"})};
  json j = graph({input("x", "i64", {3})}, {i64("table", {3}, {1, 2, 3}), i64("five", {1, 1}, {5}), i64("nine", {1}, {9})},
                 nodes, {"y"});
  Graph g = graph_from_json(j, "scatter.json", quiet());
  CHECK(ops(g) == std::vector<std::string>{"ScatterND", "Add"});
  CHECK(g.value(g.nodes[0].outputs[0]).type.shape == Shape{3});
}

TEST_CASE("an Identity of a constant folds like any node, in a chain of shape arithmetic too", "[frontend]") {
  json nodes = {node("tied", "Identity", {"shape_const"}, {"tied_shape"}), node("r1", "Reshape", {"x", "tied_shape"}, {"y1"}),
                node("shape", "Shape", {"x"}, {"s"}), node("copy", "Identity", {"s"}, {"s2"}),
                node("r2", "Reshape", {"x", "s2"}, {"y2"})};
  json j = graph({input("x", "f32", {2, 3})}, {i64("shape_const", {2}, {3, 2})}, nodes, {"y1", "y2"});
  Graph g = graph_from_json(j, "identity.json", quiet());
  CHECK(ops(g) == std::vector<std::string>{"Reshape", "Reshape"});
  CHECK(g.value(g.outputs[0]).type.shape == Shape{3, 2});
  CHECK(ints(g.value(g.nodes[1].inputs[1])) == std::vector<int64_t>{2, 3});
}

TEST_CASE("a shape computed from an input's contents is a one-line error naming node and input", "[frontend]") {
  json nodes = {node("add", "Add", {"n", "n"}, {"n2"}), node("reshape", "Reshape", {"x", "n2"}, {"y"})};
  json j = graph({input("x", "f32", {2, 6}), input("n", "i64", {2})}, {}, nodes, {"y"});
  try {
    graph_from_json(j, "dynamic.json", quiet());
    FAIL("no error");
  } catch (const UserError& e) {
    const std::string what = e.what();
    CHECK(what.find("dynamic.json") != std::string::npos);
    CHECK(what.find("node 'reshape'") != std::string::npos);
    CHECK(what.find("'n2'") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

}  // namespace tessera::folding_test
