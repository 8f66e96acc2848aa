// The xnnpack backend (see backend_registration.h and xnnpack_compiler.h).
#include "backends/compilers/backend_registration.h"
#include "backends/xnnpack/xnnpack_compiler.h"

namespace tessera {

const BackendRegistration& xnnpack_backend() {
  static const BackendRegistration r{
      .name = "xnnpack",
      .make_compiler = &make_xnnpack_compiler,
      .precision = "f32",
      .ops = {"Conv", "ConvTranspose", "MatMul", "Gemm",
              "MaxPool", "AveragePool", "GlobalAveragePool",
              "Softmax", "BatchNormalization",
              "Relu", "Clip", "LeakyRelu", "Elu", "HardSwish", "Sigmoid", "PRelu",
              "Abs", "Neg", "Sqrt", "Floor", "Ceil", "Round",
              "Add", "Sub", "Mul", "Div", "Max", "Min",
              "Resize", "Pad", "DepthToSpace",
              "Reshape", "Flatten", "Squeeze", "Unsqueeze"},
  };
  return r;
}

}  // namespace tessera
