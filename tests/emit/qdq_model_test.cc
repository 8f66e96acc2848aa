// int8 plans as QDQ ONNX (src/emit/qdq_model.h): where the pairs go, with which scales.
#include <cmath>
#include <cstring>
#include <filesystem>

#include "emit/emit_pipeline.h"
#include "emit/emit_test_util.h"
#include "emit/qdq_model.h"
#include "support/temp_dir.h"
#include "tessera/error.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// conv_block.json with weights: w0[o] = (o + 1) * (i - 30) / 100 for element i of channel o, so
// channel o's largest |w| is (o + 1) * 0.41 (i = 71); biases 0.5.
Graph weighted_conv_block() {
  Graph g = test::load_test_model("conv_block.json");
  for (Value& v : g.values) {
    if (!v.is_constant()) continue;
    std::vector<float> data(static_cast<size_t>(v.type.numel()));
    const int64_t per = v.type.shape.size() == 4 ? v.type.numel() / v.type.shape[0] : 1;
    for (size_t k = 0; k < data.size(); ++k)
      data[k] = per == 1 ? 0.5f : static_cast<float>(static_cast<int64_t>(k) / per + 1) * static_cast<float>(static_cast<int64_t>(k) % per - 30) / 100.0f;
    auto bytes = std::make_shared<TensorBytes>(data.size() * sizeof(float));
    std::memcpy(bytes->data(), data.data(), bytes->size());
    v.data = bytes;
  }
  return g;
}

Plan int8_plan(const Graph& g) {
  Plan plan = test::hand_plan(g, {{"onednn_int8", {"conv0", "relu0"}, {}, 1.0}, {"onednn", {"conv1", "add0", "relu1"}, {}, 1.0}});
  plan.quantization = PlanQuantization{"minmax", {{"x", {-1.0f, 3.0f}}, {"r0", {0.0f, 2.0f}}}};
  return plan;
}

const Node* node_named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

template <typename T>
T scalar(const Value& v) {
  T x;
  std::memcpy(&x, v.data->data(), sizeof x);
  return x;
}

TEST_CASE("qdq: the int8 partition's convolution reads its source and weight through DequantizeLinear", "[emit][qdq]") {
  const Graph g = weighted_conv_block();
  const Plan plan = int8_plan(g);
  CHECK(int8_partition_nodes(g, plan) == std::vector<NodeId>{0, 1});
  const Graph q = quantize_anchors(g, *plan.quantization, int8_partition_nodes(g, plan));

  const Node* conv0 = node_named(q, "conv0");
  REQUIRE(conv0);
  const Node& dq = q.node(q.value(conv0->inputs[0]).producer);
  CHECK(dq.op == "DequantizeLinear");
  const Node& quant = q.node(q.value(dq.inputs[0]).producer);
  CHECK(quant.op == "QuantizeLinear");
  CHECK(q.value(quant.inputs[0]).name == "x");
  // [-1, 3]: scale 4 / 255, zero point round(1 / (4 / 255)) = round(63.75) = 64.
  CHECK(scalar<float>(q.value(quant.inputs[1])) == 4.0f / 255.0f);
  CHECK(scalar<uint8_t>(q.value(quant.inputs[2])) == 64);
  CHECK(q.value(quant.outputs[0]).type.dtype == DType::u8);

  const Node& wdq = q.node(q.value(conv0->inputs[1]).producer);
  CHECK(wdq.op == "DequantizeLinear");
  CHECK(attr_int(wdq.attrs, "axis", -1) == 0);
  const Value& wq = q.value(wdq.inputs[0]);
  CHECK(wq.type.dtype == DType::i8);
  CHECK(wq.type.shape == Shape{8, 8, 3, 3});
  const Value& sw = q.value(wdq.inputs[1]);
  REQUIRE(sw.type.shape == Shape{8});
  const float* scales = reinterpret_cast<const float*>(sw.data->data());
  const int8_t* w = reinterpret_cast<const int8_t*>(wq.data->data());
  for (int o = 0; o < 8; ++o) {
    CHECK(scales[o] == static_cast<float>(o + 1) * 41.0f / 100.0f / 127.0f);
    CHECK(w[o * 72 + 71] == 127);   // the channel's largest |w|
    CHECK(w[o * 72 + 30] == 0);
  }
  CHECK(q.value(conv0->inputs[2]).name == "b0");   // the bias stays fp32

  // conv1 is in an fp32 partition: untouched. w0 is read by nobody now: dropped.
  const Node* conv1 = node_named(q, "conv1");
  REQUIRE(conv1);
  CHECK(q.value(conv1->inputs[0]).name == "r0");
  CHECK(q.value(conv1->inputs[1]).name == "w1");
  CHECK(q.find_value("w0") == kNoValue);
  // x still feeds add0 directly.
  CHECK(q.value(node_named(q, "add0")->inputs[1]).name == "x");
}

TEST_CASE("qdq: the whole model quantizes every convolution with a range", "[emit][qdq]") {
  const Graph g = weighted_conv_block();
  const Plan plan = int8_plan(g);
  std::vector<NodeId> all;
  for (NodeId n = 0; n < g.num_nodes(); ++n) all.push_back(n);
  const Graph q = quantize_anchors(g, *plan.quantization, all);
  int quantize = 0, dequantize = 0;
  for (const Node& n : q.nodes) {
    quantize += n.op == "QuantizeLinear";
    dequantize += n.op == "DequantizeLinear";
  }
  CHECK(quantize == 2);
  CHECK(dequantize == 4);
  const Node& dq = q.node(q.value(node_named(q, "conv1")->inputs[0]).producer);
  const Node& quant = q.node(q.value(dq.inputs[0]).producer);
  CHECK(scalar<float>(q.value(quant.inputs[1])) == 2.0f / 255.0f);   // [0, 2]
  CHECK(scalar<uint8_t>(q.value(quant.inputs[2])) == 0);
}

TEST_CASE("qdq: an fp32 plan has no qdq.onnx; bad input is a UserError", "[emit][qdq]") {
  Graph g = weighted_conv_block();
  Plan fp32 = test::hand_plan(g, {{"onednn", {"conv0", "relu0", "conv1", "add0", "relu1"}, {}, 1.0}});
  CHECK_FALSE(plan_qdq_onnx(g, fp32).has_value());
  fp32.quantization = int8_plan(g).quantization;   // ranges but no int8 partition
  CHECK_FALSE(plan_qdq_onnx(g, fp32).has_value());
  CHECK(plan_qdq_onnx(g, fp32, true).has_value());

  const Plan plan = int8_plan(g);
  Graph old = g;
  old.opset = 11;
  CHECK_THROWS_AS(quantize_anchors(old, *plan.quantization, {0}), UserError);
  Graph bare = g;
  bare.value(bare.find_value("w0")).data = nullptr;
  CHECK_THROWS_WITH(quantize_anchors(bare, *plan.quantization, {0}), Catch::Contains("w0"));
}

TEST_CASE("qdq: --emit writes qdq.onnx and qdq_all.onnx for an int8 plan", "[emit][qdq]") {
  const Graph g = weighted_conv_block();
  const Plan plan = int8_plan(g);
  EmitOptions options = default_emit_options(plan);
  options.codegens.clear();
  const EmitResult r = emit_module(g, plan, options);
  testing::TempDir tmp;
  const fs::path dir = tmp / "emit";
  write_emit_dir(dir.string(), g, plan, r.module, "{}\n");
  CHECK(fs::file_size(dir / "qdq.onnx") > 0);
  CHECK(fs::file_size(dir / "qdq_all.onnx") > 0);
  const onnx::ModelProto m = *plan_qdq_onnx(g, plan);
  int dq = 0;
  for (const auto& n : m.graph().node()) dq += n.op_type() == "DequantizeLinear";
  CHECK(dq == 2);
}

}  // namespace
}  // namespace tessera
