// Assembles the ref backend's kernel table from its op families (see ref_kernels.h), then wraps
// it so that every op also runs in f16 and bf16 (half_kernels.h).
#include "backends/ref/ref_kernels.h"

#include "backends/ref/half_kernels.h"

namespace tessera {

KernelRegistry make_ref_kernels() {
  KernelRegistry r("ref");
  ref::register_unary_math(r);
  ref::register_activations(r);
  ref::register_binary(r);
  ref::register_conv(r);
  ref::register_matmul(r);
  ref::register_pool(r);
  ref::register_norm(r);
  ref::register_softmax(r);
  ref::register_reduce(r);
  ref::register_reshape(r);
  ref::register_data_movement(r);
  ref::register_generate(r);
  ref::register_resize(r);
  ref::register_indexing(r);
  ref::register_recurrent(r);
  ref::register_control_flow(r);
  ref::register_quantize(r);
  ref::register_integer_linear(r);
  ref::register_qlinear_elementwise(r);
  return ref::with_half_precision(r);
}

}  // namespace tessera
