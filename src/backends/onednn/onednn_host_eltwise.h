// SiLU and erf-GELU as a pass over a oneDNN function's memory, in place of oneDNN's post-op.
// Internal to src/backends/onednn/.
//
// Why. oneDNN 2.x computes these post-ops with an exact exp or erf per element, about twice the
// cost of Eigen's rational approximations (AVX-512 when built with -march=native). Measured on
// AMD Zen 4, one thread:
//   SiLU      1x1 conv 16 -> 96 channels at 112x112: 0.38 ms bare, 1.10 ms with the swish
//             post-op, 0.76 ms bare + this pass; the eltwise primitive alone 0.76 ms for those
//             1.2 M values, Eigen 0.37. EfficientNet-B0 has 5.4 M SiLU values per inference.
//   erf-GELU  BERT's feed-forward, 128 x 3072 values: the eltwise primitive 0.27 ms, Eigen 0.13.
//
//   matmul (post-ops ..., gelu_erf)  ->  matmul (post-ops ...) ; eltwise_in_place(gelu_erf, dst)
//
// The SiLU pass itself, on AVX-512 (onednn_host_eltwise.cc): exp(-x) as 2^k times a degree-5
// polynomial in f = t - round(t), then x / (1 + exp(-x)): 13 vector ops per 16 values against
// Eigen's rational logistic (a degree-9/10 quotient plus its small-x branch), 0.165 against 0.213
// ms for 1.2 M values on AMD EPYC (Zen 4/5, one thread), within 2e-6 of x * sigmoid(x)
// (relative, every x; Eigen's logistic is within 4e-5). Without AVX-512 the pass is Eigen's.
//
// What it needs: the memory is dense (no view into a larger buffer), in any layout: both ops are
// elementwise and map 0 to 0, so channel blocks' zero padding stays zero. Precision: the
// SiLU as above (Eigen's logistic, without AVX-512: within 4e-5 relative above |x| = 1e-3);
// Eigen's erf within 1e-6.
//
// This header exposes only std types: the .cc is built with -march=native (TESSERA_NATIVE), the
// rest of the backend is not (see src/backends/CMakeLists.txt).
#pragma once

#include <cstdint>

namespace tessera::onednn {

enum class HostEltwise {
  silu,       // x * sigmoid(x)
  gelu_erf,   // x / 2 * (1 + erf(x / sqrt 2))
};

// x[i] = op(x[i]) for i < n, on OpenMP's team when n is large enough to pay for it.
void eltwise_in_place(HostEltwise op, float* x, int64_t n);

}  // namespace tessera::onednn
