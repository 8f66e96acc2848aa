#include <catch2/catch.hpp>

#include "tessera/model_loader.h"
#include "ir/op_registry.h"

using namespace tessera;

namespace {

// A one-node graph: inputs of the given types, one output of the given type.
Graph one_node(const std::string& op, std::vector<TensorType> ins, TensorType out, Attributes attrs = {}) {
  Graph g;
  Node n{.name = "n", .op = op, .attrs = std::move(attrs)};
  for (size_t i = 0; i < ins.size(); ++i) {
    ValueId v = g.add_value({.name = "i" + std::to_string(i), .type = ins[i], .kind = ValueKind::Input});
    g.inputs.push_back(v);
    n.inputs.push_back(v);
  }
  n.outputs.push_back(g.add_value({.name = "y", .type = out}));
  g.add_node(std::move(n));
  g.outputs.push_back(g.nodes[0].outputs[0]);
  return g;
}

}  // namespace

TEST_CASE("op kinds follow TVM's pattern order", "[ir]") {
  CHECK(op_kind("Relu") == OpKind::Elementwise);
  CHECK(op_kind("Add") == OpKind::Broadcast);
  CHECK(op_kind("Reshape") == OpKind::Injective);
  CHECK(op_kind("Softmax") == OpKind::Reduction);
  CHECK(op_kind("Conv") == OpKind::OutEWiseFusable);
  CHECK(op_kind("NonMaxSuppression") == OpKind::Opaque);
  CHECK(find_op("MyCustomOp") == nullptr);
  CHECK(op_kind("MyCustomOp") == OpKind::Opaque);
  CHECK(op_kind_letter(OpKind::Reduction) == 'R');
}

TEST_CASE("FLOPs of Conv, MatMul and Gemm match hand-computed values", "[ir]") {
  // Conv 1x64x56x56 -> 1x128x28x28, 3x3 kernel, bias: 2*(128*28*28)*(64*9) + 128*28*28.
  Graph conv = one_node("Conv", {{DType::f32, {1, 64, 56, 56}}, {DType::f32, {128, 64, 3, 3}}, {DType::f32, {128}}},
                        {DType::f32, {1, 128, 28, 28}});
  CHECK(node_flops(conv, conv.nodes[0]) == 2.0 * 100352 * 576 + 100352);
  // Depthwise: group 32, W 32x1x3x3: 2 * out * 9.
  Graph dw = one_node("Conv", {{DType::f32, {1, 32, 8, 8}}, {DType::f32, {32, 1, 3, 3}}}, {DType::f32, {1, 32, 8, 8}},
                      {{"group", int64_t{32}}});
  CHECK(node_flops(dw, dw.nodes[0]) == 2.0 * 2048 * 9);
  // Batched MatMul [4,128,64] x [64,32]: 2*4*128*32*64.
  Graph mm = one_node("MatMul", {{DType::f32, {4, 128, 64}}, {DType::f32, {64, 32}}}, {DType::f32, {4, 128, 32}});
  CHECK(node_flops(mm, mm.nodes[0]) == 2.0 * 4 * 128 * 32 * 64);
  // Gemm with transA: A is [K, M] = [512, 1]; B [512, 1000]; C: 2*1*1000*512 + 1000.
  Graph gemm = one_node("Gemm", {{DType::f32, {512, 1}}, {DType::f32, {512, 1000}}, {DType::f32, {1000}}},
                        {DType::f32, {1, 1000}}, {{"transA", int64_t{1}}});
  CHECK(node_flops(gemm, gemm.nodes[0]) == 2.0 * 1000 * 512 + 1000);
  CHECK(node_bytes(gemm, gemm.nodes[0]) == 4.0 * (512 + 512000 + 1000 + 1000));
}

TEST_CASE("resnet18 has the FLOPs torchvision reports", "[ir]") {
  Graph g = load_model("data/models/resnet18.onnx", {.warn = [](const std::string&) {}});
  double flops = 0;
  for (const Node& n : g.nodes) flops += node_flops(g, n);
  // torchvision: 1.814 GMACs; counted as 2 FLOPs per MAC plus biases, adds and activations.
  CHECK(flops / 1e9 == Approx(3.636).margin(0.01));
}
