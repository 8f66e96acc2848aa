// The onednn backend and its precision variants onednn_bf16 and onednn_int8 (see
// backend_registration.h): one compiler (onednn_compiler.h), three registrations. The op tables are
// what the compiler builds for each: the variants leave out the quantized ops (their specs do not
// offer them).
#include "backends/compilers/backend_registration.h"
#include "backends/onednn/onednn_compiler.h"

namespace tessera {

const BackendRegistration& onednn_backend() {
  static const BackendRegistration r{
      .name = "onednn",
      .make_compiler = &make_onednn_compiler,
      .precision = "f32",
      .ops = {"Conv", "ConvTranspose", "MatMul", "Gemm", "BatchNormalization",
              "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
              "Softmax", "LogSoftmax", "LayerNormalization",
              "Relu", "LeakyRelu", "Clip", "Abs", "Sqrt", "Exp", "Log", "Sigmoid", "Tanh", "Elu", "Gelu",
              "HardSwish", "HardSigmoid", "Softplus", "Mish",
              "Add", "Sub", "Mul", "Div", "Max", "Min",
              "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Split",
              "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger",
              "Cast", "DynamicQuantizeLinear",
              "ReduceMean", "Pow", "Erf"},   // inside the decomposed LayerNorm and GELU patterns only
  };
  return r;
}

const BackendRegistration& onednn_bf16_backend() {
  static const BackendRegistration r{
      .name = "onednn_bf16",
      .make_compiler = &make_onednn_bf16_compiler,
      .precision = "bf16",
      .ops = {"Conv", "ConvTranspose", "MatMul", "Gemm", "BatchNormalization",
              "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
              "Softmax", "LogSoftmax", "LayerNormalization",
              "Relu", "LeakyRelu", "Clip", "Abs", "Sqrt", "Exp", "Log", "Sigmoid", "Tanh", "Elu", "Gelu",
              "HardSwish", "HardSigmoid", "Softplus", "Mish",
              "Add", "Sub", "Mul", "Div", "Max", "Min",
              "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Split",
              "ReduceMean", "Pow", "Erf"},   // inside the decomposed LayerNorm and GELU patterns only
  };
  return r;
}

const BackendRegistration& onednn_int8_backend() {
  static const BackendRegistration r{
      .name = "onednn_int8",
      .make_compiler = &make_onednn_int8_compiler,
      .precision = "int8",
      .ops = {"Conv", "ConvTranspose", "MatMul", "Gemm", "BatchNormalization",
              "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
              "Softmax", "LogSoftmax", "LayerNormalization",
              "Relu", "LeakyRelu", "Clip", "Abs", "Sqrt", "Exp", "Log", "Sigmoid", "Tanh", "Elu", "Gelu",
              "HardSwish", "HardSigmoid", "Softplus", "Mish",
              "Add", "Sub", "Mul", "Div", "Max", "Min",
              "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Split",
              "ReduceMean", "Pow", "Erf"},   // inside the decomposed LayerNorm and GELU patterns only
  };
  return r;
}

}  // namespace tessera
