// Which ONNX ops are oneDNN eltwise algorithms (one or two of them) and which are binary ones.
#include <cfloat>
#include <cstring>

#include "backends/onednn/onednn_program.h"
#include "tessera/kernel.h"

namespace tessera::onednn {
namespace {

using dnnl::algorithm;

// Clip's bound from input `i` (opset >= 11) or attribute `name` (older), else `dflt`.
float clip_bound(const Graph& fn, const Node& node, size_t i, const char* name, float dflt) {
  if (i < node.inputs.size() && node.inputs[i] != kNoValue) {
    const Value& v = fn.value(node.inputs[i]);
    if (!v.is_constant() || !v.data || v.type.dtype != DType::f32 || v.type.numel() != 1)
      throw KernelUnsupported("onednn: node '" + node.name + "' (Clip): bounds must be f32 constants");
    float f;
    std::memcpy(&f, v.data->data(), sizeof f);
    return f;
  }
  return static_cast<float>(attr_float(node.attrs, name, dflt));
}

}  // namespace

std::optional<std::vector<EltwiseOp>> OnednnProgram::eltwise_ops(const Graph& fn, const Node& node) {
  const std::string& op = node.op;
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
