#include <catch2/catch.hpp>

#include "frontend/json_graph.h"
#include "ir/op_registry.h"
#include "frontend/test_util.h"

using namespace tessera;
using tessera::test::quiet;

TEST_CASE("JSON export re-imports to an equal graph, for every bundled model", "[frontend]") {
  for (const auto& path : test::bundled_models()) {
    INFO(path);
    Graph g = load_model(path, quiet());
    Graph back = graph_from_json(graph_to_json(g), "roundtrip.json", quiet());
    back.source = g.source;
    CHECK(back == g);
  }
}

TEST_CASE("a graph with folded shape computations re-imports equal from its JSON", "[frontend]") {
  // Found by fuzz_json_graph: constants read only by folded nodes were marked as shaping operands
  // in the graph but not in its re-import, which has no folded nodes.
  Graph g = load_model("tests/inputs/good/shape_chain.json", quiet());
  REQUIRE(g.num_nodes() == 1);
  Graph back = graph_from_json(graph_to_json(g), "roundtrip.json", quiet());
  back.source = g.source;
  CHECK(back == g);
}

TEST_CASE("a value folded after a node that stays keeps its place in the JSON round trip", "[frontend]") {
  // Found by fuzz_onnx: n = Size(c) is folded to a constant; the JSON form lists it with the
  // constants, before c, and the re-import numbered the values differently.
  Graph g = load_model("tests/inputs/good/folded_after_node.onnx", quiet());
  REQUIRE(g.num_nodes() == 1);
  Graph back = graph_from_json(graph_to_json(g), "roundtrip.json", quiet());
  back.source = g.source;
  CHECK(back == g);
  CHECK(g.value(g.outputs[1]).is_constant());
}

TEST_CASE("the JSON form of a small graph", "[frontend]") {
  Graph g = load_model("data/models/collage_chain.json", quiet());
  auto j = graph_to_json(g);
  CHECK(j["format"] == "tessera.graph");
  CHECK(j["nodes"].size() == 4);
  CHECK(j["nodes"][3]["op"] == "Add");
  CHECK(j["nodes"][3]["outputs"][0]["shape"] == nlohmann::json::array({10, 10}));
}

TEST_CASE("attributes of every kind survive the round trip", "[frontend]") {
  Graph g = load_model("tests/inputs/good/shape_chain.json", quiet());
  g.nodes[0].attrs["f"] = 0.5;
  g.nodes[0].attrs["ints"] = std::vector<int64_t>{1, -2};
  g.nodes[0].attrs["floats"] = std::vector<double>{0.25, 1.0};
  g.nodes[0].attrs["s"] = std::string("nearest");
  Graph back = graph_from_json(graph_to_json(g), "roundtrip.json", quiet());
  CHECK(back.nodes[0].attrs == g.nodes[0].attrs);
}

TEST_CASE("an op tessera does not know is kept as opaque, with its attributes", "[frontend]") {
  Graph g = load_model("tests/inputs/good/custom_op.json", quiet());
  REQUIRE(g.num_nodes() == 3);
  const Node& n = g.nodes[1];
  CHECK(n.op == "FancyNorm");
  CHECK(n.domain == "com.example");
  CHECK(op_kind(n.op) == OpKind::Opaque);
  CHECK(attr_string(n.attrs, "mode", "") == "fast");
  CHECK(attr_float(n.attrs, "eps", 0) == Approx(0.001));
  // Inference goes on past it: the Exp after it has its type.
  CHECK(g.value(g.outputs[0]).type == TensorType{DType::f32, {4, 4}});
}

TEST_CASE("a float constant read as Resize scales counts by value, not as a weight", "[frontend]") {
  Graph g = load_model("tests/inputs/good/resize_scales.json", quiet());
  CHECK(g.value(g.outputs[0]).type.shape == Shape{1, 2, 8, 8});
  CHECK_FALSE(g.value(g.find_value("scales")).is_weight());
  CHECK(g.value(g.find_value("w")).is_weight());
  CHECK(is_value_input("Resize", 2));
  CHECK_FALSE(is_value_input("Resize", 0));
}
