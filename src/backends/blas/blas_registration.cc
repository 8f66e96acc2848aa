// The blas backend (see backend_registration.h and blas_compiler.h).
#include "backends/blas/blas_compiler.h"
#include "backends/compilers/backend_registration.h"

namespace tessera {

const BackendRegistration& blas_backend() {
  static const BackendRegistration r{
      .name = "blas",
      .make_compiler = &make_blas_compiler,
      .precision = "f32",
      .ops = {"MatMul", "Gemm",
              "Add"},   // a constant bias folded into the GEMM (patterns blas.matmul_bias, blas.bias_matmul)
  };
  return r;
}

}  // namespace tessera
