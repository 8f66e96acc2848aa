// Schemas of ONNX Runtime's quantized com.microsoft operators (see contrib_schemas.h).
#include "frontend/contrib_schemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>

namespace tessera::detail {
namespace {

using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

constexpr const char* kDomain = "com.microsoft";

// Output 0 has the numpy broadcast of inputs a and b's shapes.
void broadcast_shape(InferenceContext& ctx, size_t a, size_t b) {
  if (!onnx::hasInputShape(ctx, a) || !onnx::hasInputShape(ctx, b)) return;
  onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, a), onnx::getInputShape(ctx, b),
                                             *onnx::getOutputShape(ctx, 0));
}

// Output 0 has numpy matmul's shape of inputs a and b: broadcast batch dimensions, then M and N
// (a 1-D operand contributes neither).
void matmul_shape(InferenceContext& ctx, size_t a, size_t b) {
  if (!onnx::hasInputShape(ctx, a) || !onnx::hasInputShape(ctx, b)) return;
  const TensorShapeProto& sa = onnx::getInputShape(ctx, a);
  const TensorShapeProto& sb = onnx::getInputShape(ctx, b);
  const int ra = sa.dim_size(), rb = sb.dim_size();
  if (ra == 0 || rb == 0) fail_shape_inference("MatMul operands must have rank >= 1");
  const auto& ka = sa.dim(ra - 1);
  const auto& kb = sb.dim(rb == 1 ? 0 : rb - 2);
  if (ka.has_dim_value() && kb.has_dim_value() && ka.dim_value() != kb.dim_value())
    fail_shape_inference("inner dimensions differ: ", ka.dim_value(), " and ", kb.dim_value());
  TensorShapeProto batch_a, batch_b;
  for (int i = 0; i + 2 < ra; ++i) *batch_a.add_dim() = sa.dim(i);
  for (int i = 0; i + 2 < rb; ++i) *batch_b.add_dim() = sb.dim(i);
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  onnx::bidirectionalBroadcastShapeInference(batch_a, batch_b, *out);
  if (ra >= 2) *out->add_dim() = sa.dim(ra - 2);
  if (rb >= 2) *out->add_dim() = sb.dim(rb - 1);
}

// Output 0 keeps N and C of input 0 and has 1 for every spatial dimension.
void global_pool_shape(InferenceContext& ctx) {
  if (!onnx::hasInputShape(ctx, 0)) return;
  const TensorShapeProto& x = onnx::getInputShape(ctx, 0);
  if (x.dim_size() < 3) fail_shape_inference("input must have rank >= 3");
  const bool channels_last = onnx::getAttribute(ctx, "channels_last", 0) != 0;
  TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  for (int i = 0; i < x.dim_size(); ++i) {
    const bool keep = i == 0 || i == (channels_last ? x.dim_size() - 1 : 1);
    if (keep) *out->add_dim() = x.dim(i);
    else out->add_dim()->set_dim_value(1);
  }
}

const std::vector<std::string> kQuantized = {"tensor(uint8)", "tensor(int8)"};

// QLinearAdd, QLinearMul: C = quantize(dequantize(A) op dequantize(B)), broadcasting.
OpSchema qlinear_binary(const char* name) {
  OpSchema s;
  s.SetName(name).SetDomain(kDomain).SinceVersion(1);
  s.Input(0, "A", "", "T").Input(1, "A_scale", "", "tensor(float)").Input(2, "A_zero_point", "", "T", OpSchema::Optional);
  s.Input(3, "B", "", "T").Input(4, "B_scale", "", "tensor(float)").Input(5, "B_zero_point", "", "T", OpSchema::Optional);
  s.Input(6, "C_scale", "", "tensor(float)").Input(7, "C_zero_point", "", "T", OpSchema::Optional);
  s.Output(0, "C", "", "T").TypeConstraint("T", kQuantized, "quantized types");
  s.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    broadcast_shape(ctx, 0, 3);
  });
  return s;
}

OpSchema qlinear_sigmoid() {
  OpSchema s;
  s.SetName("QLinearSigmoid").SetDomain(kDomain).SinceVersion(1);
  s.Input(0, "X", "", "T").Input(1, "X_scale", "", "tensor(float)").Input(2, "X_zero_point", "", "T", OpSchema::Optional);
  s.Input(3, "Y_scale", "", "tensor(float)").Input(4, "Y_zero_point", "", "T", OpSchema::Optional);
  s.Output(0, "Y", "", "T").TypeConstraint("T", kQuantized, "quantized types");
  s.TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

OpSchema qlinear_global_average_pool() {
  OpSchema s;
  s.SetName("QLinearGlobalAveragePool").SetDomain(kDomain).SinceVersion(1);
  s.Attr("channels_last", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
  s.Input(0, "X", "", "T").Input(1, "x_scale", "", "tensor(float)").Input(2, "x_zero_point", "", "T");
  s.Input(3, "y_scale", "", "tensor(float)").Input(4, "y_zero_point", "", "T");
  s.Output(0, "Y", "", "T").TypeConstraint("T", kQuantized, "quantized types");
  s.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    global_pool_shape(ctx);
  });
  return s;
}

// DynamicQuantizeMatMul(A float, B, b_scale, b_zero_point?, bias?) -> float.
OpSchema dynamic_quantize_matmul() {
  OpSchema s;
  s.SetName("DynamicQuantizeMatMul").SetDomain(kDomain).SinceVersion(1);
  s.Input(0, "A", "", "T1").Input(1, "B", "", "T2").Input(2, "b_scale", "", "T1");
  s.Input(3, "b_zero_point", "", "T2", OpSchema::Optional).Input(4, "bias", "", "T1", OpSchema::Optional);
  s.Output(0, "Y", "", "T1");
  s.TypeConstraint("T1", {"tensor(float)"}, "float").TypeConstraint("T2", kQuantized, "quantized types");
  s.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    matmul_shape(ctx, 0, 1);
  });
  return s;
}

// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?) -> float.
OpSchema matmul_integer_to_float() {
  OpSchema s;
  s.SetName("MatMulIntegerToFloat").SetDomain(kDomain).SinceVersion(1);
  s.Input(0, "A", "", "T1").Input(1, "B", "", "T2").Input(2, "a_scale", "", "T3").Input(3, "b_scale", "", "T3");
  s.Input(4, "a_zero_point", "", "T1", OpSchema::Optional).Input(5, "b_zero_point", "", "T2", OpSchema::Optional);
  s.Input(6, "bias", "", "T3", OpSchema::Optional);
  s.Output(0, "Y", "", "T3");
  s.TypeConstraint("T1", kQuantized, "quantized types").TypeConstraint("T2", kQuantized, "quantized types");
  s.TypeConstraint("T3", {"tensor(float)"}, "float");
  s.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
    matmul_shape(ctx, 0, 1);
  });
  return s;
}

}  // namespace

void register_contrib_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& domains = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    if (!domains.Map().count(kDomain)) domains.AddDomainToVersion(kDomain, 1, 1);
    for (OpSchema s : {qlinear_binary("QLinearAdd"), qlinear_binary("QLinearMul"), qlinear_sigmoid(),
                       qlinear_global_average_pool(), dynamic_quantize_matmul(), matmul_integer_to_float()})
      onnx::OpSchemaRegistry::OpSchemaRegisterOnce registered(s);
  });
}

}  // namespace tessera::detail
