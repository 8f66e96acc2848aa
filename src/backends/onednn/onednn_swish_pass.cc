// SiLU as a pass over dense memory (see onednn_swish_pass.h).
#include "backends/onednn/onednn_swish_pass.h"

#include <omp.h>

#include <algorithm>

#include <Eigen/Core>

namespace tessera::onednn {
namespace {

// Values per task: 64 KiB, a slice that stays in L2 between the read and the write.
constexpr int64_t kChunk = 16384;
// Below this many values one thread is faster than waking the team (a few microseconds).
constexpr int64_t kParallelFrom = 65536;

void swish_span(float* x, int64_t n) {
  Eigen::Map<Eigen::ArrayXf> a(x, n);
  a = a * a.logistic();
}

}  // namespace

void swish_in_place(float* x, int64_t n) {
  if (n < kParallelFrom || omp_get_max_threads() == 1 || omp_in_parallel()) {
    swish_span(x, n);
    return;
  }
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) swish_span(x + c * kChunk, std::min(kChunk, n - c * kChunk));
}

}  // namespace tessera::onednn
