// Median end-to-end latency (see latency.h).
#include "runtime/latency.h"

#include <algorithm>
#include <chrono>

#include "support/median.h"

namespace tessera {

LatencyStats measure_latency(Executor& executor, const std::vector<HostTensor>& inputs, int repeat, int warmup,
                             double give_up_above_ms) {
  for (int i = 0; i < warmup; ++i) executor.run(inputs);
  LatencyStats s;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    executor.run(inputs);
    s.samples_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (i == 0 && s.samples_ms[0] > give_up_above_ms) break;
  }
  s.median_ms = median(s.samples_ms);
  s.min_ms = *std::min_element(s.samples_ms.begin(), s.samples_ms.end());
  s.max_ms = *std::max_element(s.samples_ms.begin(), s.samples_ms.end());
  return s;
}

}  // namespace tessera
