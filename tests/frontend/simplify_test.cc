// simplify_graph on small graphs: which nodes go, which stay, and the names graph outputs keep.
// Numerics of the folds are checked in tests/runtime/simplify_run_test.cc (they need ref).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "frontend/json_graph.h"
#include "frontend/simplify.h"
#include "frontend/test_util.h"

using namespace tessera;
using tessera::test::quiet;

namespace {

// A JSON graph (json_graph.h format) of one input x and the given nodes and outputs.
Graph graph_of(const char* shape_json, const char* nodes_json, const char* outputs_json) {
  nlohmann::json j = {{"format", "tessera.graph"}, {"version", 1}, {"name", "t"}};
  j["inputs"] = {{{"name", "x"}, {"dtype", "f32"}, {"shape", nlohmann::json::parse(shape_json)}}};
  j["nodes"] = nlohmann::json::parse(nodes_json);
  j["outputs"] = nlohmann::json::parse(outputs_json);
  return graph_from_json(j, "t.json", quiet());
}

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes) out.push_back(n.op);
  return out;
}

}  // namespace

TEST_CASE("simplify: Identity, Dropout and an identity Transpose between two ops go", "[frontend]") {
  Graph g = graph_of("[2,3]", R"([
      {"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["r"]},
      {"name": "i", "op": "Identity", "inputs": ["r"], "outputs": ["ri"]},
      {"name": "d", "op": "Dropout", "inputs": ["ri"], "outputs": ["rd"]},
      {"name": "t", "op": "Transpose", "inputs": ["rd"], "outputs": ["rt"], "attrs": {"perm": [0, 1]}},
      {"name": "b", "op": "Neg", "inputs": ["rt"], "outputs": ["y"]}])",
                     R"(["y"])");
  SimplifyReport r = simplify_graph(g);
  CHECK(r.removed == std::vector<std::string>{"i", "d", "t"});
  CHECK(ops(g) == std::vector<std::string>{"Relu", "Neg"});
  CHECK(g.nodes[1].inputs[0] == g.nodes[0].outputs[0]);
  CHECK(g.value(g.outputs[0]).name == "y");
  CHECK(r.summary() == "3 no-op nodes removed");
}

TEST_CASE("simplify: a removed node's graph output name passes to the value it forwarded", "[frontend]") {
  Graph g = graph_of("[4]", R"([
      {"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["r"]},
      {"name": "i", "op": "Identity", "inputs": ["r"], "outputs": ["y"]}])",
                     R"(["y"])");
  simplify_graph(g);
  REQUIRE(ops(g) == std::vector<std::string>{"Relu"});
  CHECK(g.value(g.outputs[0]).name == "y");
  CHECK(g.value(g.outputs[0]).producer == 0);
}

TEST_CASE("simplify: an Identity from a graph input to a graph output stays", "[frontend]") {
  Graph g = graph_of("[4]", R"([{"name": "i", "op": "Identity", "inputs": ["x"], "outputs": ["y"]}])", R"(["y"])");
  Graph before = g;
  CHECK_FALSE(simplify_graph(g).changed());
  CHECK(g == before);
}

TEST_CASE("simplify: Transposes that cancel go, others stay", "[frontend]") {
  Graph g = graph_of("[1,2,3,4]", R"([
      {"name": "t1", "op": "Transpose", "inputs": ["x"], "outputs": ["a"], "attrs": {"perm": [0, 2, 3, 1]}},
      {"name": "t2", "op": "Transpose", "inputs": ["a"], "outputs": ["b"], "attrs": {"perm": [0, 3, 1, 2]}},
      {"name": "r", "op": "Relu", "inputs": ["b"], "outputs": ["c"]},
      {"name": "t3", "op": "Transpose", "inputs": ["c"], "outputs": ["d"], "attrs": {"perm": [0, 2, 3, 1]}},
      {"name": "t4", "op": "Transpose", "inputs": ["d"], "outputs": ["y"], "attrs": {"perm": [0, 2, 3, 1]}}])",
                     R"(["y"])");
  SimplifyReport r = simplify_graph(g);
  CHECK(r.removed == std::vector<std::string>{"t2", "t1"});
  CHECK(ops(g) == std::vector<std::string>{"Relu", "Transpose", "Transpose"});
  CHECK(g.value(g.nodes[0].inputs[0]).name == "x");
}

TEST_CASE("simplify: a Reshape that changes the shape stays, one that keeps it goes", "[frontend]") {
  Graph g = graph_of("[2,6]", R"([
      {"name": "same", "op": "Flatten", "inputs": ["x"], "outputs": ["a"], "attrs": {"axis": 1}},
      {"name": "r", "op": "Relu", "inputs": ["a"], "outputs": ["b"]},
      {"name": "other", "op": "Flatten", "inputs": ["b"], "outputs": ["y"], "attrs": {"axis": 0}}])",
                     R"(["y"])");
  SimplifyReport r = simplify_graph(g);
  CHECK(r.removed == std::vector<std::string>{"same"});
  CHECK(ops(g) == std::vector<std::string>{"Relu", "Flatten"});
}

// torch exports AvgPool2d as a Pad of zeros in front of AveragePool (DenseNet's transitions).
TEST_CASE("simplify: a Pad of zeros goes, one that pads or crops stays", "[frontend]") {
  nlohmann::json j = {{"format", "tessera.graph"}, {"version", 1}, {"name", "t"}};
  j["inputs"] = {{{"name", "x"}, {"dtype", "f32"}, {"shape", {1, 2, 4, 4}}}};
  j["constants"] = nlohmann::json::parse(R"([
      {"name": "zeros", "dtype": "i64", "shape": [8], "data": [0, 0, 0, 0, 0, 0, 0, 0]},
      {"name": "shift", "dtype": "i64", "shape": [8], "data": [0, 0, 1, 0, 0, 0, -1, 0]},
      {"name": "grow", "dtype": "i64", "shape": [8], "data": [0, 0, 1, 1, 0, 0, 1, 1]}])");
  j["nodes"] = nlohmann::json::parse(R"([
      {"name": "none", "op": "Pad", "inputs": ["x", "zeros"], "outputs": ["a"]},
      {"name": "r", "op": "Relu", "inputs": ["a"], "outputs": ["b"]},
      {"name": "crop", "op": "Pad", "inputs": ["b", "shift"], "outputs": ["c"]},
      {"name": "pad", "op": "Pad", "inputs": ["c", "grow"], "outputs": ["y"]}])");
  j["outputs"] = {"y"};
  Graph g = graph_from_json(j, "t.json", quiet());
  SimplifyReport r = simplify_graph(g);
  CHECK(r.removed == std::vector<std::string>{"none"});
  CHECK(ops(g) == std::vector<std::string>{"Relu", "Pad", "Pad"});
}

TEST_CASE("simplify: the ONNX importer simplifies unless asked not to", "[frontend]") {
  SimplifyReport report;
  ImportOptions opt = quiet();
  opt.simplified = &report;
  Graph g = load_model("tests/inputs/good/simplifiable.onnx", opt);
  CHECK(ops(g) == std::vector<std::string>{"Conv", "Relu", "ConvTranspose"});
  CHECK(report.removed.size() == 6);
  CHECK(report.folded == std::vector<std::string>{"bn1", "bias", "bn2"});
  CHECK(g.value(g.outputs[0]).name == "y");
  // The folded convolutions read new constants with data, not the BatchNormalization's.
  const Value& w = g.value(g.nodes[0].inputs[1]);
  CHECK(w.name == "bn1/folded_W");
  CHECK(w.data != nullptr);

  opt.simplify = false;
  Graph raw = load_model("tests/inputs/good/simplifiable.onnx", opt);
  CHECK(raw.num_nodes() == 12);
}

TEST_CASE("simplify: BatchNormalization folds only into a convolution nothing else reads", "[frontend]") {
  // Shape-only constants (no data): the folded constants are shape-only too.
  const char* constants = R"([{"name": "w", "dtype": "f32", "shape": [3, 2, 1, 1]},
      {"name": "s", "dtype": "f32", "shape": [3]}, {"name": "b", "dtype": "f32", "shape": [3]},
      {"name": "m", "dtype": "f32", "shape": [3]}, {"name": "v", "dtype": "f32", "shape": [3]}])";
  auto make = [&](const char* nodes) {
    nlohmann::json j = {{"format", "tessera.graph"}, {"version", 1}, {"name", "t"}};
    j["inputs"] = {{{"name", "x"}, {"dtype", "f32"}, {"shape", {1, 2, 4, 4}}}};
    j["constants"] = nlohmann::json::parse(constants);
    j["nodes"] = nlohmann::json::parse(nodes);
    j["outputs"] = {"y"};
    return graph_from_json(j, "t.json", quiet());
  };
  Graph shared = make(R"([
      {"name": "c", "op": "Conv", "inputs": ["x", "w"], "outputs": ["a"]},
      {"name": "bn", "op": "BatchNormalization", "inputs": ["a", "s", "b", "m", "v"], "outputs": ["n"]},
      {"name": "add", "op": "Add", "inputs": ["a", "n"], "outputs": ["y"]}])");
  CHECK_FALSE(simplify_graph(shared).changed());

  Graph alone = make(R"([
      {"name": "c", "op": "Conv", "inputs": ["x", "w"], "outputs": ["a"]},
      {"name": "bn", "op": "BatchNormalization", "inputs": ["a", "s", "b", "m", "v"], "outputs": ["y"]}])");
  SimplifyReport r = simplify_graph(alone);
  CHECK(r.folded == std::vector<std::string>{"bn"});
  REQUIRE(ops(alone) == std::vector<std::string>{"Conv"});
  const Node& c = alone.nodes[0];
  REQUIRE(c.inputs.size() == 3);
  CHECK(alone.value(c.inputs[1]).type == TensorType{DType::f32, {3, 2, 1, 1}});
  CHECK(alone.value(c.inputs[2]).type == TensorType{DType::f32, {3}});
  CHECK(alone.value(c.inputs[1]).data == nullptr);
  CHECK(alone.value(alone.outputs[0]).name == "y");
  // The BatchNormalization's constants are gone with it.
  CHECK(alone.find_value("s") == kNoValue);
}

TEST_CASE("simplify: a ReduceMean over every spatial axis is a GlobalAveragePool, plus a Flatten without keepdims",
          "[frontend]") {
  Graph g = graph_of("[1,8,5,4]", R"([
      {"name": "m", "op": "ReduceMean", "inputs": ["x"], "outputs": ["y"], "attrs": {"axes": [3, -2], "keepdims": 0}},
      {"name": "k", "op": "ReduceMean", "inputs": ["x"], "outputs": ["z"], "attrs": {"axes": [2, 3]}},
      {"name": "c", "op": "ReduceMean", "inputs": ["x"], "outputs": ["w"], "attrs": {"axes": [1, 2, 3]}}])",
                     R"(["y", "z", "w"])");
  SimplifyReport r = simplify_graph(g);
  CHECK(r.rewritten == std::vector<std::string>{"m", "k"});
  CHECK(ops(g) == std::vector<std::string>{"GlobalAveragePool", "Flatten", "GlobalAveragePool", "ReduceMean"});
  CHECK(g.nodes[0].name == "m");
  CHECK(g.nodes[1].name == "m/flatten");
  CHECK(g.value(g.nodes[0].outputs[0]).type.shape == Shape{1, 8, 1, 1});
  CHECK(g.nodes[1].inputs[0] == g.nodes[0].outputs[0]);
  CHECK(g.value(g.nodes[1].outputs[0]).name == "y");
  CHECK(g.value(g.nodes[1].outputs[0]).type.shape == Shape{1, 8});
  CHECK(g.value(g.outputs[0]).name == "y");
  CHECK(g.value(g.nodes[2].outputs[0]).name == "z");
  CHECK(g.nodes[2].attrs.empty());
  CHECK(r.summary() == "2 spatial ReduceMeans made GlobalAveragePools");
}
