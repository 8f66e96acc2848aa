// tessera's f16/bf16 conversions (Eigen::half, Eigen::bfloat16; tessera/host_tensor.h) against
// oneDNN's own: reorders f32 -> f16/bf16 and back, on the values where rounding decides (every
// 16-bit pattern, the midpoints between neighbours, ties to even, overflow, random floats).
// They must agree bit for bit, with two documented exceptions where oneDNN 2.6 departs from IEEE
// and Eigen does not: f32 subnormals to bf16 (oneDNN flushes them to zero, Eigen rounds), and the
// sign of a zero in f16 (oneDNN's f16 reorders turn -0 into +0). NaNs must stay NaNs.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/ref/half_convert.h"
#include "tessera/host_tensor.h"

namespace {

using dt = dnnl::memory::data_type;

// oneDNN's reorder of `n` elements from one data type to another.
void reorder(const void* src, dt from, void* dst, dt to, size_t n) {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::dims dims{static_cast<dnnl::memory::dim>(n)};
  dnnl::memory a({dims, from, dnnl::memory::format_tag::a}, engine, const_cast<void*>(src));
  dnnl::memory b({dims, to, dnnl::memory::format_tag::a}, engine, dst);
  dnnl::reorder(a, b).execute(stream, a, b);
  stream.wait();
}

std::vector<float> rounding_cases() {
  std::vector<float> v;
  for (uint32_t hi = 0; hi < 0x10000; ++hi) {
    const uint32_t bits = hi << 16;
    for (uint32_t low : {0u, 1u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) v.push_back(std::bit_cast<float>(bits | low));
  }
  for (uint32_t h = 0; h < 0x10000; ++h) {   // every f16 value and its midpoints to the next
    const float f = tessera::half_to_float(static_cast<uint16_t>(h));
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    for (uint32_t d : {0u, 0xFFFu, 0x1000u, 0x1001u, 0x2000u, 0x3000u}) v.push_back(std::bit_cast<float>(bits + d));
  }
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-70000.0f, 70000.0f);
  for (int i = 0; i < 100000; ++i) v.push_back(u(rng));
  for (float f : {0.0f, -0.0f, INFINITY, -INFINITY, 65504.0f, 65519.99f, 65520.0f, 1e30f, 5.96e-8f, 2.98e-8f})
    v.push_back(f);
  return v;
}

bool is_f32_subnormal(float f) { return std::fpclassify(f) == FP_SUBNORMAL; }

}  // namespace

TEST_CASE("f32 -> bf16 rounds as oneDNN does", "[half]") {
  const std::vector<float> in = rounding_cases();
  std::vector<uint16_t> onednn(in.size());
  reorder(in.data(), dt::f32, onednn.data(), dt::bf16, in.size());
  size_t compared = 0, subnormal = 0, signed_zeros = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t ours = tessera::float_to_bfloat16(in[i]);
    INFO("f32 bits " << std::hex << std::bit_cast<uint32_t>(in[i]) << ": tessera " << ours << ", oneDNN " << onednn[i]);
    if (std::isnan(in[i])) {
      CHECK(std::isnan(tessera::bfloat16_to_float(ours)));
      CHECK(std::isnan(tessera::bfloat16_to_float(onednn[i])));
    } else if (is_f32_subnormal(in[i])) {
      ++subnormal;   // oneDNN flushes to zero (signed where bf16 is native); IEEE keeps a bf16 subnormal
      CHECK((onednn[i] & 0x7FFF) == 0);
      CHECK(((ours & 0x8000) == (onednn[i] & 0x8000) || onednn[i] == 0));
    } else if (ours == 0x8000 && onednn[i] == 0) {
      ++signed_zeros;   // -0: oneDNN's conversion without native bf16 (AVX2) gives +0
    } else {
      ++compared;
      REQUIRE(ours == onednn[i]);
    }
  }
  CHECK(compared > 400000);
  CHECK(subnormal > 0);
  CHECK(signed_zeros < 100);
}

TEST_CASE("f32 -> f16 rounds as oneDNN does, subnormals and overflow included", "[half]") {
  const std::vector<float> in = rounding_cases();
  std::vector<uint16_t> onednn(in.size());
  reorder(in.data(), dt::f32, onednn.data(), dt::f16, in.size());
  size_t signed_zeros = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t ours = tessera::float_to_half(in[i]);
    INFO("f32 bits " << std::hex << std::bit_cast<uint32_t>(in[i]) << ": tessera " << ours << ", oneDNN " << onednn[i]);
    if (std::isnan(in[i])) {
      CHECK(std::isnan(tessera::half_to_float(ours)));
      CHECK(std::isnan(tessera::half_to_float(onednn[i])));
    } else if ((ours & 0x7FFF) == 0 && ours != onednn[i]) {
      ++signed_zeros;   // -0 (or a negative value rounding to -0): oneDNN gives +0
      REQUIRE(ours == 0x8000);
      REQUIRE(onednn[i] == 0);
    } else {
      REQUIRE(ours == onednn[i]);
    }
  }
  CHECK(tessera::float_to_half(-0.0f) == 0x8000);   // IEEE keeps the sign
  CHECK(signed_zeros < 100);
}

TEST_CASE("f16 and bf16 -> f32 are exact, as oneDNN's", "[half]") {
  std::vector<uint16_t> all(0x10000);
  for (uint32_t h = 0; h < 0x10000; ++h) all[h] = static_cast<uint16_t>(h);
  for (dt from : {dt::f16, dt::bf16}) {
    std::vector<float> onednn(all.size());
    reorder(all.data(), from, onednn.data(), dt::f32, all.size());
    for (uint32_t h = 0; h < 0x10000; ++h) {
      const float ours = from == dt::f16 ? tessera::half_to_float(static_cast<uint16_t>(h))
                                         : tessera::bfloat16_to_float(static_cast<uint16_t>(h));
      INFO((from == dt::f16 ? "f16 " : "bf16 ") << std::hex << h);
      if (std::isnan(ours)) REQUIRE(std::isnan(onednn[h]));
      else if (h == 0x8000) REQUIRE((ours == 0.0f && onednn[h] == 0.0f && std::signbit(ours)));   // oneDNN may drop -0's sign
      else REQUIRE(std::bit_cast<uint32_t>(ours) == std::bit_cast<uint32_t>(onednn[h]));
    }
  }
}

// The bulk conversions (tessera/half_convert.h, F16C where the CPU has it) give the scalar ones'
// bits: every f16 and bf16 pattern widened, and f32 values around every f16 rounding point
// (including ties, subnormals, overflow and NaN) narrowed; lengths that leave a scalar tail.
TEST_CASE("bulk f16/bf16 conversions match the scalar ones bit for bit") {
  std::vector<uint16_t> all(65536 + 5);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> wide(all.size());
  for (tessera::DType t : {tessera::DType::f16, tessera::DType::bf16}) {
    tessera::widen_to_f32(t, all.data(), wide.data(), all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      const float want = t == tessera::DType::f16 ? tessera::half_to_float(all[i]) : tessera::bfloat16_to_float(all[i]);
      INFO("pattern " << i);
      REQUIRE((std::isnan(want) ? std::isnan(wide[i]) : std::bit_cast<uint32_t>(wide[i]) == std::bit_cast<uint32_t>(want)));
    }
  }
  std::vector<float> xs;
  for (uint32_t h = 0; h < 0x7c00; ++h) {   // finite positive f16 values, their neighbours and midpoints
    const float v = tessera::half_to_float(static_cast<uint16_t>(h));
    const float next = tessera::half_to_float(static_cast<uint16_t>(h + 1));
    for (float x : {v, (v + next) / 2, std::nextafter((v + next) / 2, 0.0f), std::nextafter((v + next) / 2, 1e9f)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  for (float x : {70000.0f, 1e-9f, INFINITY, -INFINITY, NAN}) xs.push_back(x);
  std::vector<uint16_t> narrow(xs.size());
  for (tessera::DType t : {tessera::DType::f16, tessera::DType::bf16}) {
    tessera::narrow_from_f32(t, xs.data(), narrow.data(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const uint16_t want = t == tessera::DType::f16 ? tessera::float_to_half(xs[i]) : tessera::float_to_bfloat16(xs[i]);
      INFO("value " << xs[i]);
      if (std::isnan(xs[i]))
        REQUIRE(std::isnan(t == tessera::DType::f16 ? tessera::half_to_float(narrow[i]) : tessera::bfloat16_to_float(narrow[i])));
      else
        REQUIRE(narrow[i] == want);
    }
  }
}
