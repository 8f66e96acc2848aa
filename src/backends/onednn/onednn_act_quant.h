// Per-tensor quantization of a value with a calibrated range (Value::range), as the int8
// precision variant (onednn_int8_variant.cc) and the plan's QDQ model (src/emit/qdq_model.cc)
// both compute it: one definition, so the model written out quantizes exactly as the plan runs.
//
//   u8 (a source: input 0 of a conv or matmul)       s8 (a matmul's computed right operand)
//   lo' = min(lo, 0), hi' = max(hi, 0)                m = max(|lo|, |hi|)
//   scale = (hi' - lo') / 255                         scale = m / 127
//   zero point = round(-lo' / scale) in [0, 255]      zero point 0 (symmetric: oneDNN's int8
//                                                     matmul takes no zero point on its weights)
//
// Either is nullopt for an empty or non-finite range: such a value is not quantized.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

namespace tessera::onednn {

struct ActQuant {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

inline std::optional<ActQuant> u8_quant(std::pair<float, float> range) {
  const float lo = std::min(range.first, 0.0f), hi = std::max(range.second, 0.0f);
  if (!(hi - lo > 1e-30f) || !std::isfinite(hi - lo)) return std::nullopt;
  ActQuant q;
  q.scale = (hi - lo) / 255.0f;
  q.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(-lo / q.scale), 0.0f, 255.0f));
  return q;
}

inline std::optional<ActQuant> s8_quant(std::pair<float, float> range) {
  const float m = std::max(std::fabs(range.first), std::fabs(range.second));
  if (!(m > 1e-30f) || !std::isfinite(m)) return std::nullopt;
  return ActQuant{m / 127.0f, 0};
}

}  // namespace tessera::onednn
