// Weight layouts: ONNX's filters rearranged into the ones XNNPACK's subgraph API takes. Run once
// per set of weights, when a runtime is created (XNNPACK then packs them for its kernels).
//
//   Conv           ONNX [O, C/g, KH, KW]          -> XNNPACK [O, KH, KW, C/g]      (O = g * O/g)
//   depthwise Conv ONNX [C*m, 1, KH, KW]          -> XNNPACK [1, KH, KW, C*m]
//   ConvTranspose  ONNX [C, O/g, KH, KW]          -> XNNPACK [g * O/g, KH, KW, C/g]
//   Gemm / MatMul  ONNX B [K, N] (or [N, K] with transB) -> XNNPACK [N, K], times alpha
#pragma once

#include <cstddef>

namespace tessera::xnnpack {

void conv_filter(const float* src, float* dst, size_t O, size_t Cg, size_t KH, size_t KW);
void depthwise_filter(const float* src, float* dst, size_t O, size_t KH, size_t KW);
void deconv_filter(const float* src, float* dst, size_t groups, size_t Cg, size_t Og, size_t KH, size_t KW);
// dst[N, K] = alpha * (transposed ? src[N, K] : src[K, N]^T)
void fc_filter(const float* src, float* dst, size_t K, size_t N, bool transposed, float alpha);
// dst[i] = scale * src[i]
void scaled_copy(const float* src, float* dst, size_t n, float scale);

}  // namespace tessera::xnnpack
