// HostTensor and the half-precision conversions (see include/tessera/host_tensor.h).
#include "tessera/host_tensor.h"

#include <cmath>
#include <cstring>

#include <Eigen/Core>

#include "backends/kernel.h"

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

// Eigen's IEEE conversions, round-to-nearest-even, subnormals kept (Eigen/src/Core/arch/Default/
// Half.h and BFloat16.h). NaN becomes the quiet NaN 0x7E00 (f16) / 0x7FC0 (bf16), sign kept.
// tests/backends/onednn/half_conversion_test.cc checks them bit for bit against oneDNN's reorders.
float half_to_float(uint16_t h) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h)); }
uint16_t float_to_half(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::half(f)); }
float bfloat16_to_float(uint16_t b) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(b)); }
uint16_t float_to_bfloat16(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(f)); }

double relative_l2_error(const HostTensor& actual, const HostTensor& reference) {
  if (!(actual.type == reference.type)) return INFINITY;
  const DType t = actual.type.dtype;
  if (t != DType::f32 && t != DType::f16 && t != DType::bf16) return actual.bytes == reference.bytes ? 0.0 : INFINITY;
  auto element = [t](const HostTensor& h, size_t i) -> double {
    if (t == DType::f32) return h.as<float>()[i];
    const uint16_t bits = h.as<uint16_t>()[i];
    return t == DType::f16 ? half_to_float(bits) : bfloat16_to_float(bits);
  };
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < actual.count(); ++i) {
    const double a = element(actual, i), r = element(reference, i);
    diff += (a - r) * (a - r);
    norm += r * r;
  }
  if (!std::isfinite(diff) || !std::isfinite(norm)) return INFINITY;
  if (norm == 0.0) return diff == 0.0 ? 0.0 : INFINITY;
  return std::sqrt(diff / norm);
}

}  // namespace tessera
