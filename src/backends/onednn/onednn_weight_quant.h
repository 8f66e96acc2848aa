// Per-channel s8 weights for the int8 precision variant (onednn_int8_variant.cc), from f32 ones,
// on the host when the weights' pointer changes.
//
// Channel c's weights w[c] (per_channel elements) round to q = clamp(round(w / sw[c]), -127, 127)
// with sw[c] = r max|w[c]| / 127, r in {1, 0.98, ..., 0.60} the ratio whose rounding of w[c] has
// the least squared error (MSE-optimal clipping; the first on ties, so plain max / 127 unless a
// finer step for all the others pays for clipping the channel's largest weights). A few percent
// less squared error per channel; resnet18 in int8 reads 0.0126 end to end instead of 0.0136 with
// plain max / 127 (docs/benchmarks.md, "int8 by accuracy budget"). The search runs 21 roundings
// of every weight, once per compile of an int8 function; rounding inline (round_half_even, the
// same values as nearbyint) halves what that costs a run of resnet18's int8 plan, compile included
// (0.83 -> 0.40 s of CPU).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tessera::onednn {

// std::nearbyint(x) in the default rounding mode (to nearest, ties to even), for |x| < 2^22,
// without a call into libm: adding 1.5 * 2^23 leaves no fraction bits, so the float addition
// rounds x to an integer the same way (ties to even), and the subtraction is exact. The weights'
// ratios x = w / step stay within +-212 here; the compiler may not reassociate the two (no
// -ffast-math in this build), and the result is bit for bit nearbyint's but for the sign of a
// zero, which rounds and compares the same.
inline float round_half_even(float x) {
  constexpr float kShift = 12582912.0f;   // 1.5 * 2^23
  return (x + kShift) - kShift;
}

// `channels` channels, element i of channel c at c * channel_stride + i * elem_stride
// (i < per_channel). Writes the quantized bytes at the same offsets and scale[c] = act_scale * sw[c].
struct WeightQuantizer {
  int64_t channels = 0, per_channel = 0, channel_stride = 0, elem_stride = 0;
  float act_scale = 1.0f;
  void operator()(const float* w, int8_t* q, float* scale) const {
    for (int64_t c = 0; c < channels; ++c) {
      float m = 0.0f;
      for (int64_t i = 0; i < per_channel; ++i) m = std::max(m, std::fabs(w[c * channel_stride + i * elem_stride]));
      const float sw = m > 0.0f ? clipped_step(w + c * channel_stride, m) : 1.0f;
      for (int64_t i = 0; i < per_channel; ++i) {
        const int64_t at = c * channel_stride + i * elem_stride;
        q[at] = static_cast<int8_t>(std::clamp(round_half_even(w[at] / sw), -127.0f, 127.0f));
      }
      scale[c] = act_scale * sw;
    }
  }
  // The step r m / 127, r in {1, 0.98, ..., 0.60}, whose rounding of the channel has the least
  // squared error (the first on ties: m / 127 unless clipping the largest weights pays).
  float clipped_step(const float* w, float m) const {
    float best_step = m / 127.0f;
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k <= 20; ++k) {
      const float step = (1.0f - 0.02f * static_cast<float>(k)) * m / 127.0f;
      double e = 0.0;
      for (int64_t i = 0; i < per_channel; ++i) {
        const float x = w[i * elem_stride];
        const double d = static_cast<double>(std::clamp(round_half_even(x / step), -127.0f, 127.0f) * step) - static_cast<double>(x);
        e += d * d;
      }
      if (e < best) best = e, best_step = step;
    }
    return best_step;
  }
};

}  // namespace tessera::onednn
