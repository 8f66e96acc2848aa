// Median end-to-end latency (see latency.h).
#include "runtime/latency.h"

#include <algorithm>

#include "support/median.h"

namespace tessera {

LatencyStats measure_latency(Executor& executor, const std::vector<HostTensor>& inputs, int repeat, int warmup,
                             double give_up_above_ms, RunClock clock) {
  for (int i = 0; i < warmup; ++i) executor.run(inputs);
  LatencyStats s;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    const double t0 = run_clock_ms(clock);
    executor.run(inputs);
    s.samples_ms.push_back(run_clock_ms(clock) - t0);
    if (i == 0 && s.samples_ms[0] > give_up_above_ms) break;
  }
  s.median_ms = median(s.samples_ms);
  s.min_ms = *std::min_element(s.samples_ms.begin(), s.samples_ms.end());
  s.max_ms = *std::max_element(s.samples_ms.begin(), s.samples_ms.end());
  return s;
}

}  // namespace tessera
