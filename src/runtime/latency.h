// End-to-end latency of an Executor: `warmup` untimed runs (first-touch page faults, oneDNN's
// weight reorders cached on the first run, OpenMP pool start-up), then `repeat` timed runs; the
// median is what `tessera run` and `tessera bench` report (robust to one descheduled run on a
// shared machine, unlike the mean). Timing is around Executor::run only (inputs are prepared
// before, nothing is copied inside), by `clock`: wall time (steady_clock) by default, what `tessera
// run` reports; tune's race and `bench` pass plan_run_clock(), CPU time at one compute thread
// (run_clock.h: what the run costs, whatever else the machine runs).
#pragma once

#include <limits>
#include <vector>

#include "runtime/executor.h"
#include "runtime/run_clock.h"

namespace tessera {

struct LatencyStats {
  double median_ms = 0.0;
  double min_ms = 0.0;
  double max_ms = 0.0;
  std::vector<double> samples_ms;   // in run order
};

// `give_up_above_ms`: when the first timed run takes longer, the rest are skipped and that run is
// the result (a plan already that far behind what it is raced against need not be timed further;
// verified_choice.h). Infinite by default: every run is timed.
LatencyStats measure_latency(Executor& executor, const std::vector<HostTensor>& inputs, int repeat, int warmup = 1,
                             double give_up_above_ms = std::numeric_limits<double>::infinity(),
                             RunClock clock = RunClock::wall);

}  // namespace tessera
