// The eigen backend (see backend_registration.h and eigen_compiler.h).
#include "backends/compilers/backend_registration.h"
#include "backends/eigen/eigen_compiler.h"

namespace tessera {

const BackendRegistration& eigen_backend() {
  static const BackendRegistration r{
      .name = "eigen",
      .make_compiler = &make_eigen_compiler,
      .precision = "f32",
      .ops = {"MatMul", "Gemm",
              "Relu", "Abs", "Neg", "Clip", "LeakyRelu", "Sqrt", "Reciprocal", "Sigmoid", "Tanh", "Exp", "Log", "Erf",
              "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min",
              "ReduceSum", "ReduceMean", "ReduceMax", "Softmax"},
  };
  return r;
}

}  // namespace tessera
