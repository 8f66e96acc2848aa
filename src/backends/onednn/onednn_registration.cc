// The onednn backend and its precision variants onednn_bf16 and onednn_int8 (see
// backend_registration.h): one compiler (onednn_compiler.h), three registrations. The op tables are
// what the compiler builds for each: the variants leave out the quantized ops (their specs do not
// offer them).
#include <string>
#include <vector>

#include "backends/compilers/backend_registration.h"
#include "backends/onednn/onednn_compiler.h"

namespace tessera {
namespace {

// What the compiler builds on floating-point values: the whole op table of the precision variants,
// which compute these same ops in bf16 or int8 inside (ReduceMean, Pow and Erf only inside the
// decomposed LayerNorm and GELU patterns).
std::vector<std::string> float_ops() {
  return {"Conv", "ConvTranspose", "MatMul", "Gemm", "BatchNormalization",
          "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
          "Softmax", "LogSoftmax", "LayerNormalization",
          "Relu", "LeakyRelu", "Clip", "Abs", "Sqrt", "Exp", "Log", "Sigmoid", "Tanh", "Elu", "Gelu",
          "HardSwish", "HardSigmoid", "Softplus", "Mish",
          "Add", "Sub", "Mul", "Div", "Max", "Min",
          "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Split",
          "ReduceMean", "Pow", "Erf"};
}

// onednn's own table adds the quantized ops and the conversions around them, and Resize
// (onednn_resize.cc; linear only, computed in f32).
std::vector<std::string> onednn_ops() {
  std::vector<std::string> ops = float_ops();
  for (const char* op : {"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger",
                         "MatMulInteger", "Cast", "DynamicQuantizeLinear", "Resize"})
    ops.push_back(op);
  return ops;
}

}  // namespace

const BackendRegistration& onednn_backend() {
  static const BackendRegistration r{
      .name = "onednn",
      .make_compiler = &make_onednn_compiler,
      .precision = "f32",
      .ops = onednn_ops(),
  };
  return r;
}

const BackendRegistration& onednn_bf16_backend() {
  static const BackendRegistration r{
      .name = "onednn_bf16",
      .make_compiler = &make_onednn_bf16_compiler,
      .precision = "bf16",
      .ops = float_ops(),
  };
  return r;
}

const BackendRegistration& onednn_int8_backend() {
  static const BackendRegistration r{
      .name = "onednn_int8",
      .make_compiler = &make_onednn_int8_compiler,
      .precision = "int8",
      .ops = float_ops(),
  };
  return r;
}

}  // namespace tessera
