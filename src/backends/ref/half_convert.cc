// Bulk f16/bf16 <-> f32 conversions (see tessera/half_convert.h).
#include "backends/ref/half_convert.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define TESSERA_HAVE_F16C_PATH 1
#endif

#include "tessera/host_tensor.h"
#include "backends/kernel.h"

namespace tessera {
namespace {

#ifdef TESSERA_HAVE_F16C_PATH
// Eight elements at a time; the scalar tail uses the same rounding (IEEE nearest even).
__attribute__((target("avx,f16c"))) void f16_to_f32_f16c(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = half_to_float(src[i]);
}

__attribute__((target("avx,f16c"))) void f32_to_f16_f16c(const float* src, uint16_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) dst[i] = float_to_half(src[i]);
}

// F16C from CPUID leaf 1 (clang 14's __builtin_cpu_supports does not know "f16c"); "avx" also
// says the OS saves the YMM registers.
bool cpu_has_f16c() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  return has;
}
#endif

// bf16 is the top half of an f32: widening is a shift, which the compiler vectorizes.
void bf16_to_f32(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
    std::memcpy(dst + i, &bits, sizeof bits);
  }
}

}  // namespace

void widen_to_f32(DType from, const void* src, float* dst, size_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  if (from == DType::bf16) return bf16_to_f32(s, dst, n);
  if (from != DType::f16) throw KernelError("widen_to_f32: " + std::string(dtype_name(from)) + " is not f16 or bf16");
#ifdef TESSERA_HAVE_F16C_PATH
  if (cpu_has_f16c()) return f16_to_f32_f16c(s, dst, n);
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = half_to_float(s[i]);
}

void narrow_from_f32(DType to, const float* src, void* dst, size_t n) {
  auto* d = static_cast<uint16_t*>(dst);
  if (to == DType::bf16) {
    for (size_t i = 0; i < n; ++i) d[i] = float_to_bfloat16(src[i]);
    return;
  }
  if (to != DType::f16) throw KernelError("narrow_from_f32: " + std::string(dtype_name(to)) + " is not f16 or bf16");
#ifdef TESSERA_HAVE_F16C_PATH
  if (cpu_has_f16c()) return f32_to_f16_f16c(src, d, n);
#endif
  for (size_t i = 0; i < n; ++i) d[i] = float_to_half(src[i]);
}

}  // namespace tessera
