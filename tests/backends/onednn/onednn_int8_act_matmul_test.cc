// onednn_int8's matmuls with both operands computed (onednn_int8_act_matmul.cc): attention's
// Q·K^T and softmax·V run u8 x s8 with per-tensor scales from the calibrated ranges of both
// operands (calibrate_ranges ranges a MatMul's computed right operand too), close to fp32 but
// not equal; a second run on other inputs requantizes them (the operands are not weights
// quantized once); the end-to-end error of such an anchor is measured like any other's; the QDQ
// model quantizes the right operand per tensor to s8 and agrees with the plan's int8.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "backends/onednn/int8_test_inputs.h"
#include "backends/compilers/backend_compiler.h"
#include "backends/compilers/function_builder.h"
#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "emit/qdq_model.h"
#include "ir/calibrated_ranges.h"
#include "runtime/int8_calibration.h"

using namespace tessera;
using tessera::testing::inputs_of;
using tessera::testing::run_function;
using tessera::testing::ref_values;
using tessera::testing::FunctionBuilder;

namespace {

// q [1,2,16,8], kt [1,2,8,16], v [1,2,16,8] (computed upstream in a model: function inputs here)
//   s = MatMul(q, kt) * 0.35 -> Softmax -> MatMul(., v) -> o [1,2,16,8]
Graph attention() {
  FunctionBuilder b;
  const ValueId q = b.input("q", {1, 2, 16, 8}), kt = b.input("kt", {1, 2, 8, 16}), v = b.input("v", {1, 2, 16, 8});
  const ValueId c = b.scalar("c", 0.35f);
  const ValueId s = b.node("MatMul", {q, kt}, {1, 2, 16, 16});
  const ValueId m = b.node("Mul", {s, c}, {1, 2, 16, 16});
  const ValueId p = b.node("Softmax", {m}, {1, 2, 16, 16}, {{"axis", int64_t{-1}}});
  b.output(b.node("MatMul", {p, v}, {1, 2, 16, 8}));
  Graph g = std::move(b.g);
  g.opset = 17;
  return g;
}


Graph ranged_attention(const std::vector<HostTensor>& calibration) {
  const Graph g = attention();
  return with_calibrated_ranges(g, calibrate_ranges(g, ref_values(g, calibration), "minmax").ranges);
}

}  // namespace

TEST_CASE("calibrate_ranges: a MatMul's computed right operand is a source") {
  const Graph g = attention();
  const PlanQuantization q = calibrate_ranges(g, ref_values(g, inputs_of(g, 1)), "minmax");
  std::vector<std::string> names;
  for (const auto& [name, range] : q.ranges) names.push_back(name);
  std::ranges::sort(names);
  INFO(names.size());
  CHECK(names.size() == 4);   // q, kt, the softmax output, v
  CHECK(std::ranges::count(names, "kt") == 1);
  CHECK(std::ranges::count(names, "v") == 1);
}

TEST_CASE("onednn_int8: Q·K^T and softmax·V run u8 x s8, close to fp32; other inputs are requantized") {
  const std::vector<HostTensor> calibration = inputs_of(attention(), 1);
  const Graph ranged = ranged_attention(calibration);
  auto compiled = make_backend_compiler("onednn_int8")->compile(ranged);   // KernelUnsupported if neither ran int8
  const HostTensor out = run_function(*compiled, ranged, calibration);
  const double e = relative_l2_error(out, ref_values(ranged, calibration)[static_cast<size_t>(ranged.outputs[0])]);
  INFO("int8 error on calibration " << e);
  CHECK(e > 1e-4);   // int8 really runs (f32 oneDNN is ~1e-6 from ref)
  CHECK(e < 0.03);
  // Another input through the same compiled function: as a fresh compile, and close to fp32.
  const std::vector<HostTensor> other = inputs_of(attention(), 50);
  const HostTensor again = run_function(*compiled, ranged, other);
  const HostTensor fresh = run_function(*make_backend_compiler("onednn_int8")->compile(ranged), ranged, other);
  CHECK(std::ranges::equal(again.as<float>(), fresh.as<float>()));
  const double held = relative_l2_error(again, ref_values(ranged, other)[static_cast<size_t>(ranged.outputs[0])]);
  INFO("held out " << held);
  CHECK(held < 0.05);
}

TEST_CASE("Int8CandidateErrors: an activation-by-activation MatMul's end-to-end error is measured") {
  const std::vector<HostTensor> calibration = inputs_of(attention(), 1);
  const Graph ranged = ranged_attention(calibration);
  const std::vector<HostTensor> values = ref_values(ranged, calibration);
  Int8CandidateErrors errors(ranged, values);
  for (NodeId n = 0; n < ranged.num_nodes(); ++n) {
    if (ranged.node(n).op != "MatMul") continue;
    const double e = errors.anchor_error("onednn_int8", n);
    INFO(ranged.node(n).name << ": " << e);
    CHECK(e > 1e-5);   // it ran in int8 (a declined anchor reads 0)
    CHECK(e < 0.03);
  }
}

TEST_CASE("QDQ model: a computed right operand is quantized per tensor to s8 and agrees with the int8 plan") {
  const std::vector<HostTensor> calibration = inputs_of(attention(), 1);
  const Graph g = attention();
  const PlanQuantization q = calibrate_ranges(g, ref_values(g, calibration), "minmax");
  std::vector<NodeId> all;
  for (NodeId n = 0; n < g.num_nodes(); ++n) all.push_back(n);
  const std::vector<NodeId> anchors = int8_anchors(g, q, all);
  CHECK(anchors.size() == 2);
  const Graph qdq = quantize_anchors(g, q, anchors);
  int s8 = 0;
  for (const Node& n : qdq.nodes)
    if (n.op == "QuantizeLinear" && qdq.value(n.outputs[0]).type.dtype == DType::i8) ++s8;
  CHECK(s8 == 2);   // kt and v
  // ref running the QDQ model lands on the int8 plan's outputs, far closer than either to fp32.
  const Graph ranged = with_calibrated_ranges(g, q.ranges);
  const HostTensor plan = run_function(*make_backend_compiler("onednn_int8")->compile(ranged), ranged, calibration);
  std::map<ValueId, HostTensor> bindings;
  for (size_t i = 0; i < qdq.inputs.size(); ++i) bindings[qdq.inputs[i]] = calibration[i];
  const HostTensor model = interpret(qdq, make_ref_kernels(), bindings)[static_cast<size_t>(qdq.outputs[0])];
  const HostTensor fp32 = ref_values(g, calibration)[static_cast<size_t>(g.outputs[0])];
  const double agree = relative_l2_error(plan, model), apart = relative_l2_error(plan, fp32);
  INFO("plan vs QDQ model " << agree << ", plan vs fp32 " << apart);
  CHECK(agree < apart / 5);
}
