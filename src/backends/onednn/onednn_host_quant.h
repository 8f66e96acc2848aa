// The integer passes of the onednn backend that oneDNN 2.x has no primitive for, as loops over a
// function's memory. Internal to src/backends/onednn/.
//
//   dynamic_quantize   DynamicQuantizeLinear (onednn_int8.cc): the range [min(x, 0), max(x, 0)]
//                      (NaNs ignored), scale (hi - lo) / 255, zero point round(clamp(-lo / scale)),
//                      q = saturate(round_half_even(x / scale) + zero point), NaN -> zero point:
//                      ref's arithmetic (backends/ref/quant_util.h), step for step, so the results
//                      are bit-identical to ref's.
//   add_term           ConvInteger / MatMulInteger's weight zero point term (onednn_integer.cc):
//                      acc[p][j] + c * sums[p][j / per_group] in int32, in place or written as f32
//                      (the Cast that follows, rounded to nearest even like ref's).
//   dequantize_axis    DequantizeLinear per axis with zero points (a u8 weight quantized per
//                      channel, zero point 128): y = (q - z[c]) * s[c], the integer difference exact
//                      and one f32 rounding, as ref's; oneDNN 2.x's reorder takes one zero point.
//   quantized_add      QDQ residual sum (onednn_qdq.h, QAddMatch): y = Q(clip((a - za) sa + (b - zb) sb)),
//                      each step in f32 as ref's DequantizeLinear, Add, Relu/Clip, QuantizeLinear.
//
// Why a file of its own: built with -march=native (TESSERA_NATIVE, src/backends/CMakeLists.txt),
// these loops vectorize (rounding included: vrndscaleps on AVX-512); without it nearbyint is a libm
// call per element. It is also built with -ffp-contract=off: a fused multiply-add would round
// (q - z) * s + b once where ref rounds twice. ISNet's 119 dynamically quantized convolutions pass 0.6 GB through them per
// inference. The header exposes only std types, like onednn_host_eltwise.h.
#pragma once

#include <cstdint>

namespace tessera::onednn {

// q[i] for x[0..n), and the scale and zero point it used.
void dynamic_quantize(const float* x, int64_t n, uint8_t* q, float* scale, uint8_t* zero_point);

// For p < rows, j < cols: v = acc[p * cols + j] + c * sums[p * groups + j / (cols / groups)];
// written to to_f32 when given, else back into acc.
void add_term(int32_t* acc, const int32_t* sums, float* to_f32, int64_t rows, int64_t cols, int64_t groups, int32_t c);

// y[(o * axis + c) * inner + i] = (q[...] - zero_point[c]) * scale[c] for o < outer, c < axis,
// i < inner; q is s8 (is_signed), else u8; plain (dense, row-major) on both sides.
void dequantize_axis(const void* q, bool is_signed, const int32_t* zero_point, const float* scale, float* y, int64_t outer,
                     int64_t axis, int64_t inner);

// An 8-bit tensor's quantization for quantized_add: its data is signed (s8) or not (u8).
struct HostQuant {
  bool is_signed = false;
  float scale = 1.0f;
  int32_t zero_point = 0;
};
// y[i] for i < n from a[i], b[i] (same layout), the sum clamped to [lo, hi] (-inf, inf: none).
void quantized_add(const void* a, HostQuant aq, const void* b, HostQuant bq, void* y, HostQuant yq, float lo, float hi, int64_t n);

}  // namespace tessera::onednn
