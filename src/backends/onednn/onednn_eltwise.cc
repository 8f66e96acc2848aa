// Which ONNX ops are oneDNN eltwise algorithms (one or two of them) and which are binary ones.
#include <cfloat>
#include <cstring>

#include "backends/onednn/onednn_program.h"
#include "backends/kernel.h"

namespace tessera::onednn {
namespace {

using dnnl::algorithm;

// The value of an f32 constant with one element, if `v` is one and its data is here.
std::optional<float> scalar_constant(const Graph& fn, ValueId v) {
  const Value& val = fn.value(v);
  if (!val.is_constant() || !val.data || val.type.dtype != DType::f32 || val.type.numel() != 1) return std::nullopt;
  float f;
  std::memcpy(&f, val.data->data(), sizeof f);
  return f;
}

// Clip's bound from input `i` (opset >= 11) or attribute `name` (older), else `dflt`.
float clip_bound(const Graph& fn, const Node& node, size_t i, const char* name, float dflt) {
  if (i < node.inputs.size() && node.inputs[i] != kNoValue) {
    if (auto f = scalar_constant(fn, node.inputs[i])) return *f;
    throw KernelUnsupported("onednn: node '" + node.name + "' (Clip): bounds must be f32 constants");
  }
  return static_cast<float>(attr_float(node.attrs, name, dflt));
}

// Add, Sub, Mul or Div of a full-size value and a constant scalar, as the eltwise alpha * x + beta.
// oneDNN's binary primitive with a broadcast scalar has only its reference kernel on a blocked
// source (nChw8c, what AVX2 convolutions pick), so the decomposed HardSwish of a convolution's
// output, (x + 3) clipped, then reordered to plain and back; an eltwise runs on any layout and
// fuses into the anchor as an eltwise post-op. c / x is not linear and stays a binary.
std::optional<EltwiseOp> scalar_linear(const Graph& fn, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return std::nullopt;
  const auto c0 = scalar_constant(fn, node.inputs[0]), c1 = scalar_constant(fn, node.inputs[1]);
  if (c0.has_value() == c1.has_value()) return std::nullopt;
  const ValueId x = c1 ? node.inputs[0] : node.inputs[1];
  if (fn.value(x).type != fn.value(node.outputs[0]).type) return std::nullopt;
  const float c = c1 ? *c1 : *c0;
  if (node.op == "Add") return EltwiseOp{algorithm::eltwise_linear, 1.0f, c};
  if (node.op == "Mul") return EltwiseOp{algorithm::eltwise_linear, c, 0.0f};
  if (node.op == "Sub") return c1 ? EltwiseOp{algorithm::eltwise_linear, 1.0f, -c} : EltwiseOp{algorithm::eltwise_linear, -1.0f, c};
  if (node.op == "Div" && c1 && c != 0.0f) return EltwiseOp{algorithm::eltwise_linear, 1.0f / c, 0.0f};
  return std::nullopt;
}

}  // namespace

ValueId OnednnProgram::eltwise_source(const Graph& fn, const Node& node) {
  if (node.inputs.size() == 2 && scalar_constant(fn, node.inputs[0])) return node.inputs[1];
  return node.inputs[0];
}

std::optional<std::vector<EltwiseOp>> OnednnProgram::eltwise_ops(const Graph& fn, const Node& node) {
  const std::string& op = node.op;
  if (binary_alg(op)) {
    if (auto e = scalar_linear(fn, node)) return std::vector<EltwiseOp>{*e};
    return std::nullopt;
  }
  auto one = [](algorithm a, float alpha = 0.0f, float beta = 0.0f) {
    return std::vector<EltwiseOp>{{a, alpha, beta}};
  };
  auto alpha = [&](double dflt) { return static_cast<float>(attr_float(node.attrs, "alpha", dflt)); };
  if (op == "Relu") return one(algorithm::eltwise_relu);
  if (op == "LeakyRelu") return one(algorithm::eltwise_relu, alpha(0.01));
  if (op == "Elu") return one(algorithm::eltwise_elu, alpha(1.0));
  if (op == "Sigmoid") return one(algorithm::eltwise_logistic);
  if (op == "Tanh") return one(algorithm::eltwise_tanh);
  if (op == "Abs") return one(algorithm::eltwise_abs);
  if (op == "Sqrt") return one(algorithm::eltwise_sqrt);
  if (op == "Exp") return one(algorithm::eltwise_exp);
  if (op == "Log") return one(algorithm::eltwise_log);
  if (op == "Neg") return one(algorithm::eltwise_linear, -1.0f, 0.0f);
  if (op == "Softplus") return one(algorithm::eltwise_soft_relu, 1.0f);
  if (op == "Mish") return one(algorithm::eltwise_mish);
  if (op == "HardSwish") return one(algorithm::eltwise_hardswish, 1.0f / 6.0f, 0.5f);
  if (op == "Gelu")
    return one(attr_string(node.attrs, "approximate", "none") == "tanh" ? algorithm::eltwise_gelu_tanh
                                                                         : algorithm::eltwise_gelu_erf);
  if (op == "Clip")
    return one(algorithm::eltwise_clip_v2, clip_bound(fn, node, 1, "min", -FLT_MAX),
               clip_bound(fn, node, 2, "max", FLT_MAX));
  if (op == "HardSigmoid")   // max(0, min(1, alpha*x + beta)): no hardsigmoid before oneDNN 2.7
    return std::vector<EltwiseOp>{{algorithm::eltwise_linear, alpha(0.2), static_cast<float>(attr_float(node.attrs, "beta", 0.5))},
                                  {algorithm::eltwise_clip_v2, 0.0f, 1.0f}};
  return std::nullopt;
}

std::optional<dnnl::algorithm> OnednnProgram::binary_alg(const std::string& op) {
  if (op == "Add") return algorithm::binary_add;
  if (op == "Sub") return algorithm::binary_sub;
  if (op == "Mul") return algorithm::binary_mul;
  if (op == "Div") return algorithm::binary_div;
  if (op == "Max") return algorithm::binary_max;
  if (op == "Min") return algorithm::binary_min;
  return std::nullopt;
}

}  // namespace tessera::onednn
