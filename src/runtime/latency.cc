// Median end-to-end latency (see latency.h).
#include "tessera/latency.h"

#include <algorithm>
#include <chrono>

namespace tessera {

LatencyStats measure_latency(Executor& executor, const std::vector<HostTensor>& inputs, int repeat, int warmup) {
  for (int i = 0; i < warmup; ++i) executor.run(inputs);
  LatencyStats s;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    executor.run(inputs);
    s.samples_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<double> sorted = s.samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  s.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  return s;
}

}  // namespace tessera
