// The halide backend (see backend_registration.h and halide_compiler.h).
#include "backends/compilers/backend_registration.h"
#include "backends/halide/halide_compiler.h"

namespace tessera {

const BackendRegistration& halide_backend() {
  static const BackendRegistration r{
      .name = "halide",
      .make_compiler = &make_halide_compiler,
      .precision = "f32",
      .ops = {"Relu", "Abs", "Neg", "Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Tanh", "Sin", "Cos", "Floor", "Ceil",
              "Identity", "Sigmoid", "Softplus", "Mish", "LeakyRelu", "Elu", "HardSigmoid", "HardSwish",
              "Gelu", "Cast", "Clip", "PRelu",
              "Add", "Sum", "Sub", "Mul", "Div", "Max", "Min", "Mean", "Pow",
              "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Slice", "Pad", "Expand",
              "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL2",
              "GlobalAveragePool", "GlobalMaxPool", "MaxPool", "AveragePool",
              "Softmax", "LogSoftmax", "LayerNormalization", "BatchNormalization", "Resize"},
  };
  return r;
}

}  // namespace tessera
