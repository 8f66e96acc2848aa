// measure_function: compile one function on one backend and time it, in this process.
//
//   compile(fn) ─▶ inputs (seeded random floats and bools; zeros for integer tensors, so Gather
//                  indices and the like stay in range) and outputs from fn's types
//              ─▶ warm-up: runs for ~10% of the budget, at least one
//              ─▶ before every run, when evict_bytes > 0: a scratch buffer of that size is written
//                 (the core's private caches lose fn's weights and outputs), fn's outputs are
//                 flushed from every cache level (clflush: in a plan they were last touched a
//                 whole run earlier), then fn's inputs are read back, in order, up to half the
//                 scratch size (one private cache: what a producer that just wrote them leaves)
//              ─▶ timed runs until (elapsed >= budget and runs >= min_repeats) or runs == max_repeats
//              ─▶ median, p10, p90 of the per-run seconds
//
// The clock: wall time (steady_clock), or with cpu_time the process's CPU time
// (CLOCK_PROCESS_CPUTIME_ID, every thread's), as plans are timed at one compute thread
// (src/runtime/run_clock.h). At one thread every backend computes on the calling thread, so a
// run's CPU time is its latency on an idle core; its wall time adds every moment the scheduler
// gives the core to another process. A tune on a loaded machine priced candidates at their wall
// time: shufflenet_v2's whole-model oneDNN function at 16.2 ms whose plan runs in 2.4 ms of CPU
// time, efficientnet_b0's at 15.2 ms against 6.3 in the plan. Such prices are compared, by the
// search and by the race's second opinion (src/runtime/verified_choice.h), with prices taken a
// minute earlier or later at another load; in CPU time they track what runs.
//
// Why evict: a function in a plan runs after other functions that have filled the private caches
// with their own data, so its weights come from the shared cache or memory; timed back to back on
// the same buffers it finds everything in L1/L2 and looks faster than it runs. Measured on
// PaddleOCR cls's 74-partition plan (AMD EPYC, 1 MiB L2): hot runs predicted 0.68-0.80 of the
// plan's per-call times, evicted runs 0.89-0.96. The eviction is outside the timed interval.
//
// Why the median: one run disturbed by the OS (a page fault, a migration) must not move the cost;
// p90 - p10 is the spread the cost database keeps so that noisy entries can be spotted later.
// Exceptions (KernelUnsupported from compile, KernelError from run, anything) propagate: the
// caller, usually a child process (isolated_call.h), turns them into Invalid costs.
//
// The answer travels between processes as one line of text: encode / decode below ("%a" hex
// floats, so nothing is lost in printing; the error, when measured, is a fifth field).
//
// Error (precision variants): the compiled function's outputs on the measurement's inputs against
// the same function compiled by `reference` (ref's fp32 kernels) on the same inputs; the timed runs
// are unaffected (the comparison runs once, after them).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "backends/compilers/backend_compiler.h"
#include "tessera/graph.h"

namespace tessera {

struct TimingOptions {
  std::chrono::duration<double> budget{0.020};
  int min_repeats = 3;
  int max_repeats = 50;
  uint64_t seed = 0x7e55e7a;
  size_t evict_bytes = 0;   // > 0: evict the private caches before each run (above); 0: hot runs
  bool cpu_time = false;    // time runs by the process's CPU time (one compute thread), not wall time
};

// A reading of the clock `cpu_time` picks, in seconds (only differences mean anything).
double timing_clock_seconds(bool cpu_time);

// Twice this core's L2 (sysconf), 2 MiB when unknown, at most 16 MiB: enough to push a function's
// data out of L1 and L2, cheap enough (well under a millisecond) to do before every run.
size_t default_evict_bytes();

struct Timing {
  double median = 0.0;   // seconds per run
  double p10 = 0.0;
  double p90 = 0.0;
  int64_t samples = 0;
  std::optional<double> error;   // relative L2 error against the reference, when one was given

  std::string encode() const;
  static std::optional<Timing> decode(std::string_view text);
};

// `reference` (ref's compiler), when given, also runs fn once on the same inputs, and Timing::error
// is relative_l2_error(outputs, reference outputs), max over fn's outputs (host_tensor.h).
// `layouts`: fn's boundary layouts; null: the backend's native ones on every input and output (a
// candidate's inputs are all activations), as the executor runs it (boundary_layout.h).
Timing measure_function(const BackendCompiler& compiler, const Graph& fn, const TimingOptions& options,
                        const BackendCompiler* reference = nullptr, const BoundaryLayouts* layouts = nullptr);

}  // namespace tessera
