// SiLU and erf-GELU as a pass over dense memory (see onednn_host_eltwise.h).
#include "backends/onednn/onednn_host_eltwise.h"

#include <omp.h>

#include <algorithm>

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

namespace tessera::onednn {
namespace {

// Values per task: 64 KiB, a slice that stays in L2 between the read and the write.
constexpr int64_t kChunk = 16384;
// Below this many values one thread is faster than waking the team (a few microseconds).
constexpr int64_t kParallelFrom = 65536;

void eltwise_span(HostEltwise op, float* x, int64_t n) {
  Eigen::Map<Eigen::ArrayXf> a(x, n);
  switch (op) {
    case HostEltwise::silu: a = a * a.logistic(); break;
    case HostEltwise::gelu_erf: a = 0.5f * a * (1.0f + (a * 0.70710678118654752f).erf()); break;
  }
}

}  // namespace

void eltwise_in_place(HostEltwise op, float* x, int64_t n) {
  if (n < kParallelFrom || omp_get_max_threads() == 1 || omp_in_parallel()) {
    eltwise_span(op, x, n);
    return;
  }
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) eltwise_span(op, x + c * kChunk, std::min(kChunk, n - c * kChunk));
}

}  // namespace tessera::onednn
