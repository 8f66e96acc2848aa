// The integer passes of the onednn backend (see onednn_host_quant.h); built with -march=native.
#include "backends/onednn/onednn_host_quant.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace tessera::onednn {

void dynamic_quantize(const float* x, int64_t n, uint8_t* q, float* scale, uint8_t* zero_point) {
  float lo = 0.0f, hi = 0.0f;   // the range always holds 0, so that 0 is exact
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] == x[i] ? x[i] : 0.0f;   // NaN: ignored (0 is in the range anyway)
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const float s = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const auto z = static_cast<uint8_t>(std::nearbyint(std::clamp(0.0f - lo / s, 0.0f, 255.0f)));
  *scale = s;
  *zero_point = z;
  const float zf = z;
  for (int64_t i = 0; i < n; ++i) {
    // Rounded before the zero point is added, as ref: adding it first would round a fraction near
    // .5 in float. A NaN fails both comparisons of the clamp below and is replaced.
    const float r = std::nearbyint(x[i] / s) + zf;
    const float c = r < 0.0f ? 0.0f : (r > 255.0f ? 255.0f : r);
    q[i] = static_cast<uint8_t>(x[i] == x[i] ? c : zf);
  }
}

void add_term(int32_t* acc, const int32_t* sums, float* to_f32, int64_t rows, int64_t cols, int64_t groups, int32_t c) {
  const int64_t per_group = cols / groups;
  for (int64_t p = 0; p < rows; ++p) {
    int32_t* a = acc + p * cols;
    const int32_t* s = sums + p * groups;
    if (groups == 1) {   // the common case: one term per row
      const int32_t t = c * s[0];
      if (to_f32)
        for (int64_t j = 0; j < cols; ++j) to_f32[p * cols + j] = static_cast<float>(a[j] + t);
      else
        for (int64_t j = 0; j < cols; ++j) a[j] += t;
      continue;
    }
    for (int64_t j = 0; j < cols; ++j) {
      const int32_t v = a[j] + c * s[j / per_group];
      if (to_f32) to_f32[p * cols + j] = static_cast<float>(v);
      else a[j] = v;
    }
  }
}

namespace {

template <typename Q>
void dequantize_axis_typed(const Q* q, const int32_t* zero_point, const float* scale, float* y, int64_t outer, int64_t axis,
                           int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < axis; ++c) {
      const int64_t base = (o * axis + c) * inner;
      const int32_t z = zero_point[c];
      const float s = scale[c];
      for (int64_t i = 0; i < inner; ++i) y[base + i] = static_cast<float>(static_cast<int32_t>(q[base + i]) - z) * s;
    }
}

template <typename A, typename B, typename Y>
void quantized_add_typed(const A* a, HostQuant aq, const B* b, HostQuant bq, Y* y, HostQuant yq, float lo, float hi, int64_t n) {
  const float qmin = std::is_signed_v<Y> ? -128.0f : 0.0f, qmax = std::is_signed_v<Y> ? 127.0f : 255.0f;
  const float zy = static_cast<float>(yq.zero_point);
  for (int64_t i = 0; i < n; ++i) {
    // ref: DequantizeLinear (q - z) * s, Add, Relu / Clip, QuantizeLinear round(x / s) + z.
    const float fa = static_cast<float>(static_cast<int32_t>(a[i]) - aq.zero_point) * aq.scale;
    const float fb = static_cast<float>(static_cast<int32_t>(b[i]) - bq.zero_point) * bq.scale;
    const float v = std::min(std::max(fa + fb, lo), hi);
    const float r = std::nearbyint(v / yq.scale) + zy;
    y[i] = static_cast<Y>(r < qmin ? qmin : (r > qmax ? qmax : r));
  }
}

template <typename A, typename B>
void quantized_add_to(const A* a, HostQuant aq, const B* b, HostQuant bq, void* y, HostQuant yq, float lo, float hi, int64_t n) {
  if (yq.is_signed) quantized_add_typed(a, aq, b, bq, static_cast<int8_t*>(y), yq, lo, hi, n);
  else quantized_add_typed(a, aq, b, bq, static_cast<uint8_t*>(y), yq, lo, hi, n);
}

template <typename A>
void quantized_add_from(const A* a, HostQuant aq, const void* b, HostQuant bq, void* y, HostQuant yq, float lo, float hi, int64_t n) {
  if (bq.is_signed) quantized_add_to(a, aq, static_cast<const int8_t*>(b), bq, y, yq, lo, hi, n);
  else quantized_add_to(a, aq, static_cast<const uint8_t*>(b), bq, y, yq, lo, hi, n);
}

}  // namespace

void dequantize_axis(const void* q, bool is_signed, const int32_t* zero_point, const float* scale, float* y, int64_t outer,
                     int64_t axis, int64_t inner) {
  if (is_signed) dequantize_axis_typed(static_cast<const int8_t*>(q), zero_point, scale, y, outer, axis, inner);
  else dequantize_axis_typed(static_cast<const uint8_t*>(q), zero_point, scale, y, outer, axis, inner);
}

void quantized_add(const void* a, HostQuant aq, const void* b, HostQuant bq, void* y, HostQuant yq, float lo, float hi, int64_t n) {
  if (aq.is_signed) quantized_add_from(static_cast<const int8_t*>(a), aq, b, bq, y, yq, lo, hi, n);
  else quantized_add_from(static_cast<const uint8_t*>(a), aq, b, bq, y, yq, lo, hi, n);
}

}  // namespace tessera::onednn
