// HostTensor and the half-precision conversions (see include/tessera/host_tensor.h).
#include "tessera/host_tensor.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "tessera/kernel.h"

namespace tessera {
namespace {

// splitmix64: tiny, fast, and the same stream on every platform.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

template <typename T, typename F>
void fill(HostTensor& h, F make) {
  auto out = h.as<T>();
  for (auto& x : out) x = make();
}

}  // namespace

HostTensor::HostTensor(TensorType t) : type(std::move(t)), bytes(type.bytes()) {}

HostTensor HostTensor::random(const TensorType& t, uint64_t seed) {
  HostTensor h(t);
  SplitMix64 rng{seed};
  auto real = [&] { return rng.uniform() * 2.0 - 1.0; };
  auto integer = [&] { return static_cast<int64_t>(rng.next() % 10); };
  switch (t.dtype) {
    case DType::f32: fill<float>(h, [&] { return static_cast<float>(real()); }); break;
    case DType::f64: fill<double>(h, real); break;
    case DType::f16: fill<uint16_t>(h, [&] { return float_to_half(static_cast<float>(real())); }); break;
    case DType::bf16:
      fill<uint16_t>(h, [&] { return float_to_bfloat16(static_cast<float>(real())); });
      break;
    case DType::i64: fill<int64_t>(h, integer); break;
    case DType::i32: fill<int32_t>(h, [&] { return static_cast<int32_t>(integer()); }); break;
    case DType::i8: fill<int8_t>(h, [&] { return static_cast<int8_t>(integer()); }); break;
    case DType::u8: fill<uint8_t>(h, [&] { return static_cast<uint8_t>(integer()); }); break;
    case DType::boolean: fill<uint8_t>(h, [&] { return static_cast<uint8_t>(rng.next() & 1); }); break;
  }
  return h;
}

HostTensor HostTensor::from_tensor(const Tensor& t) {
  if (!t.data) throw std::invalid_argument("HostTensor::from_tensor: " + to_string(t.type) + " has no data");
  HostTensor h(t.type);
  if (t.data->size() != h.bytes.size())
    throw std::invalid_argument("HostTensor::from_tensor: " + std::to_string(t.data->size()) +
                                " bytes for " + to_string(t.type));
  if (!h.bytes.empty()) std::memcpy(h.bytes.data(), t.data->data(), h.bytes.size());
  return h;
}

TensorView HostTensor::view() { return TensorView{type, bytes.data()}; }
ConstTensorView HostTensor::view() const { return ConstTensorView{type, bytes.data()}; }

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);          // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // normal: rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign;                                       // zero
  } else {                                             // subnormal: normalise
    exp = 113;
    while (!(mant & 0x400u)) { mant <<= 1; --exp; }
    bits = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u);
  if (abs >= 0x477FF000u) return sign | 0x7C00u;        // rounds to inf
  if (abs < 0x38800000u) {                             // subnormal half (or zero)
    const float scaled = std::bit_cast<float>(abs) * 0x1.0p24f;  // exact: units of 2^-24
    const auto m = static_cast<uint32_t>(std::nearbyint(scaled));
    return sign | static_cast<uint16_t>(m);
  }
  const uint32_t rounded = abs + 0xFFFu + ((abs >> 13) & 1u);  // round to nearest even
  return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
}

float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bfloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

double relative_l2_error(const HostTensor& actual, const HostTensor& reference) {
  if (!(actual.type == reference.type)) return INFINITY;
  if (actual.type.dtype != DType::f32) return actual.bytes == reference.bytes ? 0.0 : INFINITY;
  const std::span<const float> a = actual.as<float>(), r = reference.as<float>();
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(r[i]);
    diff += d * d;
    norm += static_cast<double>(r[i]) * r[i];
  }
  if (!std::isfinite(diff) || !std::isfinite(norm)) return INFINITY;
  if (norm == 0.0) return diff == 0.0 ? 0.0 : INFINITY;
  return std::sqrt(diff / norm);
}

}  // namespace tessera
