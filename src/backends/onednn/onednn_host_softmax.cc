// Softmax over dense rows (see onednn_host_softmax.h).
#include "backends/onednn/onednn_host_softmax.h"

#include <omp.h>

#include <cmath>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace tessera::onednn {
namespace {

// Values per task below which one thread is faster than waking the team.
constexpr int64_t kParallelFrom = 65536;

#if defined(__AVX512F__)
// exp(x) for x <= 0 (a value less its row's maximum): n = round(x / ln2), r = x - n ln2 in two
// parts (Cody-Waite), exp(r) by its Taylor polynomial of degree 6 on |r| <= ln2/2 (relative error
// below 2e-7), times 2^n. Below -87.3 the result would be subnormal: clamped there (about 1e-38,
// against a row maximum's exp(0) = 1, nothing that changes a sum).
inline __m512 exp_nonpositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

void softmax_row(const float* x, float* y, int64_t n) {
  const int64_t body = n / 16 * 16;
  const auto tail = static_cast<__mmask16>((1u << (n - body)) - 1);
  __m512 m = _mm512_set1_ps(-INFINITY);
  for (int64_t i = 0; i < body; i += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(x + i));
  if (tail) m = _mm512_mask_max_ps(m, tail, m, _mm512_maskz_loadu_ps(tail, x + body));
  const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(m));
  __m512 s = _mm512_setzero_ps();
  for (int64_t i = 0; i < body; i += 16) {
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(x + i), mx));
    _mm512_storeu_ps(y + i, e);
    s = _mm512_add_ps(s, e);
  }
  if (tail) {
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + body), mx));
    _mm512_mask_storeu_ps(y + body, tail, e);
    s = _mm512_mask_add_ps(s, tail, s, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(s));
  for (int64_t i = 0; i < body; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
  if (tail) _mm512_mask_storeu_ps(y + body, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + body), inv));
}
#endif

}  // namespace

bool host_softmax_available() {
#if defined(__AVX512F__)
  return true;
#else
  return false;
#endif
}

void softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
#if defined(__AVX512F__)
  if (rows * n < kParallelFrom || omp_get_max_threads() == 1 || omp_in_parallel()) {
    for (int64_t r = 0; r < rows; ++r) softmax_row(x + r * n, y + r * n, n);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) softmax_row(x + r * n, y + r * n, n);
#else
  (void)x, (void)y, (void)rows, (void)n;
#endif
}

}  // namespace tessera::onednn
