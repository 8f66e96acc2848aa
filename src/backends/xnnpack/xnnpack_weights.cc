// Weight layouts for XNNPACK (see xnnpack_weights.h).
#include "backends/xnnpack/xnnpack_weights.h"

namespace tessera::xnnpack {

void conv_filter(const float* src, float* dst, size_t O, size_t Cg, size_t KH, size_t KW) {
  for (size_t o = 0; o < O; ++o)
    for (size_t c = 0; c < Cg; ++c)
      for (size_t h = 0; h < KH; ++h)
        for (size_t w = 0; w < KW; ++w) dst[((o * KH + h) * KW + w) * Cg + c] = src[((o * Cg + c) * KH + h) * KW + w];
}

void depthwise_filter(const float* src, float* dst, size_t O, size_t KH, size_t KW) {
  for (size_t o = 0; o < O; ++o)
    for (size_t k = 0; k < KH * KW; ++k) dst[k * O + o] = src[o * KH * KW + k];
}

void deconv_filter(const float* src, float* dst, size_t groups, size_t Cg, size_t Og, size_t KH, size_t KW) {
  for (size_t g = 0; g < groups; ++g)
    for (size_t c = 0; c < Cg; ++c)
      for (size_t o = 0; o < Og; ++o)
        for (size_t k = 0; k < KH * KW; ++k)
          dst[((g * Og + o) * KH * KW + k) * Cg + c] = src[(((g * Cg + c) * Og) + o) * KH * KW + k];
}

void fc_filter(const float* src, float* dst, size_t K, size_t N, bool transposed, float alpha) {
  for (size_t n = 0; n < N; ++n)
    for (size_t k = 0; k < K; ++k) dst[n * K + k] = alpha * (transposed ? src[n * K + k] : src[k * N + n]);
}

void scaled_copy(const float* src, float* dst, size_t n, float scale) {
  for (size_t i = 0; i < n; ++i) dst[i] = scale * src[i];
}

}  // namespace tessera::xnnpack
