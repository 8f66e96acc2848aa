// SiLU (x * sigmoid(x)) as a pass over a oneDNN function's memory, in place of oneDNN's swish
// post-op. Internal to src/backends/onednn/.
//
// Why. oneDNN 2.x computes its swish post-op with an exact exp and a division per element: on
// AMD Zen 4, one thread, a 1x1 convolution 16 -> 96 channels at 112x112 ran 0.38 ms bare and
// 1.10 ms with the post-op; the eltwise primitive alone took 0.76 ms for those 1.2 M values, where
// Eigen's logistic (a rational approximation, one division per vector, AVX-512 when built with
// -march=native) took 0.37. The convolution without the post-op followed by this pass ran
// 0.76 ms (24 -> 144 at 56x56: 0.48 fused, 0.43 apart). EfficientNet-B0 has 5.4 M SiLU values per
// inference, all behind convolutions.
//
//   conv (post-ops ..., swish)  ->  conv (post-ops ...) ; swish_in_place(dst)
//
// What it needs: the memory is dense (no view into a larger buffer), in any layout: SiLU is
// elementwise, and channel blocks' zero padding stays zero (silu(0) = 0). Precision: Eigen's
// logistic is within 4e-5 (relative) of the exact one above |x| = 1e-3.
//
// This header exposes only std types: the .cc is built with -march=native (TESSERA_NATIVE), the
// rest of the backend is not (see src/backends/CMakeLists.txt).
#pragma once

#include <cstdint>

namespace tessera::onednn {

// x[i] = x[i] * sigmoid(x[i]) for i < n, on OpenMP's team when n is large enough to pay for it.
void swish_in_place(float* x, int64_t n);

}  // namespace tessera::onednn
