// Softmax over the last axis as a pass over dense rows, in place of oneDNN's primitive.
// Internal to src/backends/onednn/.
//
// Why. oneDNN 2.6's softmax (jit:avx512_core, softmax_accurate) takes 42-50 us for attention's
// [3, 197, 197] scores on AMD Zen 4, one thread; ONNX Runtime's 34 us. This pass takes 22 us: per
// row one read for the maximum, one for exp(x - max) written out with its sum, one scaling by
// 1 / sum, the exp a Cody-Waite reduction to [-ln2/2, ln2/2], a degree-6 Taylor polynomial and a
// scale by 2^n (vscalefps): within 1e-6 relative of the exact softmax.
//
// Where it runs: AVX-512 builds only (the .cc is built with -march=native under TESSERA_NATIVE,
// src/backends/CMakeLists.txt); elsewhere host_softmax_available() is false and the primitive
// stays. Rows are split over OpenMP's team when there are enough of them to pay for it.
//
// This header exposes only std types: the rest of the backend is not built with -march=native.
#pragma once

#include <cstdint>

namespace tessera::onednn {

// Whether softmax_rows is compiled in (AVX-512).
bool host_softmax_available();

// y[r, :] = softmax(x[r, :]) for `rows` dense rows of `n` values; x and y may be the same.
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n);

}  // namespace tessera::onednn
