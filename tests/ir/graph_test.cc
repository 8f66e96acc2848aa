#include <catch2/catch.hpp>

#include "tessera/graph.h"
#include "tessera/tensor_type.h"

using namespace tessera;

TEST_CASE("dtype names and sizes round trip", "[ir]") {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i64, DType::i32, DType::i8, DType::u8,
                  DType::boolean}) {
    REQUIRE(dtype_from_name(dtype_name(t)) == t);
    REQUIRE(dtype_from_onnx(dtype_to_onnx(t)) == t);
  }
  CHECK(dtype_size(DType::f32) == 4);
  CHECK(dtype_size(DType::bf16) == 2);
  CHECK(TensorType{DType::f32, {1, 3, 224, 224}}.bytes() == 602112);
  CHECK(to_string(TensorType{DType::i64, {}}) == "i64[]");
  CHECK(shape_to_string({1, 3, 224, 224}) == "1x3x224x224");
}

TEST_CASE("graph records producers and consumers", "[ir]") {
  Graph g;
  ValueId x = g.add_value({.name = "x", .type = {DType::f32, {4}}, .kind = ValueKind::Input});
  g.inputs.push_back(x);
  ValueId a = g.add_value({.name = "a", .type = {DType::f32, {4}}});
  ValueId b = g.add_value({.name = "b", .type = {DType::f32, {4}}});
  g.add_node({.name = "r", .op = "Relu", .inputs = {x}, .outputs = {a}});
  g.add_node({.name = "s", .op = "Add", .inputs = {a, a}, .outputs = {b}});
  g.outputs.push_back(b);
  CHECK(g.value(a).producer == 0);
  CHECK(g.value(b).producer == 1);
  auto consumers = g.consumers();
  CHECK(consumers[x] == std::vector<NodeId>{0});
  CHECK(consumers[a] == std::vector<NodeId>{1});  // listed once although read twice
  CHECK(g.is_output(b));
  CHECK(g.find_node("s") == 1);
}

TEST_CASE("weights are float constants with more than one element", "[ir]") {
  Value w{.type = {DType::f32, {64, 3, 3, 3}}, .kind = ValueKind::Constant};
  Value scalar{.type = {DType::f32, {}}, .kind = ValueKind::Constant};
  Value shape{.type = {DType::i64, {2}}, .kind = ValueKind::Constant};
  CHECK(w.is_weight());
  CHECK_FALSE(scalar.is_weight());
  CHECK_FALSE(shape.is_weight());
}
