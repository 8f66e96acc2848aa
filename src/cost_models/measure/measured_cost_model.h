// MeasuredCostModel ("--cost measure"): the cost of a candidate function is how long it takes to
// run, measured on this machine with the backend's real compiler.
//
// One measurement, for CostRequest{fn, backend}:
//   fork ─▶ child: compiler = make_compiler(backend); f = compiler->compile(fn)
//                  inputs: seeded random floats, zeros for integer tensors (Gather indices stay in
//                  range), outputs allocated from fn's types
//                  warm up, then time f.run() until `budget` has passed (at least min_repeats
//                  runs) or max_repeats runs are done
//                  -> one line on a pipe: median, p90 - p10, sample count
//        parent: waits up to `timeout`; the median is the cost, the spread and samples go to the
//                cost database beside it (estimate_entry_impl)
// Failures are costs, never exceptions: KernelUnsupported or any other exception in the child ->
// Invalid("<backend>: <what>"); a child killed by a signal -> Invalid("crashed: signal 11
// (Segmentation fault)"); one that outlives `timeout` is killed -> Invalid("timed out after 10 s").
// So a backend that aborts or hangs costs one candidate, not the tuning run.
//
// Why a child process per measurement: isolation is the requirement, and a process is the only
// unit a segfault or a hang cannot escape. fork() copies the candidate function for free; it costs
// ~1 ms against a default budget of 20 ms. The child starts from a multi-threaded parent, so it
// sets its own compute threads first and ends with _exit (no parent destructors run twice).
//
// Measurements never overlap more than `max_parallel` at once (a slot is held from fork to
// reap), so with -j N at most N run side by side, each on set_compute_threads(threads) (1 by
// default): one per core, not disturbing each other. Extraction and hashing happen before, in
// parallel, in the partition pipeline.
//
// Database key (estimator.h cost_key): the backend name (and CostRequest::backend_version when
// given), device_fingerprint() = "<device>/<machine_fingerprint()>/t<threads>", where the machine
// is the CPU model name from /proc/cpuinfo and a hash of its ISA flags (AVX-512 masked in one VM
// and not in another is another machine), and
// fingerprint() = "measure/7/<hash of every backend compiler's name and version(), and of
// evict_bytes>", so a library upgrade, another CPU, another thread count or another way of
// timing never reuses a stale measurement (measure/1: runs timed hot, without eviction;
// measure/2: boundaries timed plain, before boundary layouts; measure/3: outputs left in cache
// between runs; measure/4: every input read back before each run, weights included; measure/5:
// 4-D weights bound nhwc, so reordered on every run; measure/6: wall time at one thread, where
// now CPU time, measure_function.h).
//
// The clock: at one compute thread (`threads` 1) each timed run reads the process's CPU time in
// the child, as plans are timed (src/runtime/run_clock.h), so a candidate's price is what it
// costs, not how long it waited for the core on a loaded machine; above one thread, wall time.
//
// Tuning runs (tessera tune) add three things through Options, all optional:
//   journal   a CostDatabase consulted before measuring and appended to the moment a measurement
//             finishes, so a kill loses nothing finished (the estimator alone would insert only
//             after the whole batch);
//   stop      when set (SIGINT), no new measurement starts and running children are killed; their
//             costs are Unknown, which is never stored;
//   on_measured  progress reporting, called after every finished measurement (any thread).
//
// Not needed for correctness: the journal (the estimator caches too) and isolation itself
// (isolate = false measures in-process, for profiling the measurement loop).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cost_models/cost_model_options.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/cost_database.h"
#include "tessera/cost_model.h"
#include "cost_models/machine.h"

namespace tessera {

using CompilerFactory = std::function<std::unique_ptr<BackendCompiler>(const std::string& backend)>;

struct MeasureOptions {
  std::chrono::duration<double> budget{0.020};    // timed runs stop after this much...
  int min_repeats = 3;                             // ...once at least this many are done,
  int max_repeats = 50;                            // or at this many
  std::chrono::duration<double> timeout{10.0};     // per measurement, compile included
  int threads = 1;                                 // set_compute_threads in each child
  // Before each timed run, evict the core's private caches by writing this many bytes, then read
  // the inputs back (measure_function.h: a function in a plan finds its weights evicted by its
  // neighbours). -1: twice the L2 (default_evict_bytes); 0: hot runs, as before measure/2.
  int64_t evict_bytes = -1;
  int max_parallel = 0;                            // measurements at once; <= 0: hardware cores
  bool isolate = true;                             // false: measure in this process (no timeout)
  uint64_t seed = 0x7e55e7a;                       // input data seed

  // Backend name -> compiler; default make_measure_compiler (test_sleep_compiler.h: the real
  // backends, plus test_sleep when its test hook is set). Called in the child, and once per
  // name in `backends` by the constructor for version().
  CompilerFactory make_compiler;
  // Backends whose versions enter fingerprint(); default backend_compiler_names().
  std::vector<std::string> backends;

  CostDatabase* journal = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const CostRequest&, const CostEntry&)> on_measured;
};

// Counters since construction; thread-safe snapshots.
struct MeasureStats {
  size_t measured = 0;       // finished measurements (Value or Invalid)
  size_t invalid = 0;        // of which Invalid
  size_t journal_hits = 0;   // answered from the journal without measuring
  size_t skipped = 0;        // Unknown because `stop` was set
};

// The revision in fingerprint(): raised whenever how a candidate is timed changes (above).
inline constexpr int kMeasureRevision = 7;

class MeasuredCostModel final : public CostModel {
 public:
  explicit MeasuredCostModel(MeasureOptions options = {});

  std::string name() const override { return "measure"; }
  bool measures() const override { return true; }
  bool prices_layouts() const override { return true; }
  std::string fingerprint() const override { return fingerprint_; }
  std::string device_fingerprint(std::string_view device) const override;

  const MeasureOptions& options() const { return options_; }
  // Whether runs are timed by CPU time: at one compute thread (measure_function.h).
  bool cpu_clock() const { return options_.threads <= 1; }
  MeasureStats stats() const;

 protected:
  Cost estimate_impl(const CostRequest& request) const override;
  CostEntry estimate_entry_impl(const CostRequest& request) const override;
  // A backend without a compiler (a declarative spec such as "byoc") cannot be measured: UserError.
  void check_backends_impl(const std::vector<BackendRef>& backends) const override;

 private:
  CostEntry measure(const CostRequest& request) const;
  bool stopping() const { return options_.stop && options_.stop->load(); }

  MeasureOptions options_;
  std::string fingerprint_;
  std::string machine_;
  int max_parallel_ = 1;

  mutable std::mutex mu_;
  mutable std::condition_variable slot_free_;
  mutable int running_ = 0;
  mutable MeasureStats stats_;
};

// Parses the ARG of "--cost measure:ARG": comma-separated key=value pairs, keys budget_ms,
// repeats, min_repeats, timeout_s, threads, parallel, evict_kb, e.g. "budget_ms=50,repeats=100". Empty ARG:
// defaults. Throws UserError("--cost: measure:...: ...") for anything else.
MeasureOptions parse_measure_options(std::string_view arg, MeasureOptions base = {});

// The --cost hook: CostModelOptions whose make_measure builds a MeasuredCostModel from the
// "measure:ARG" text, and whose host.fit_backends times the real backends when a roofline profile
// is calibrated for this machine (backend_fit.h). Give it to make_cost_model (cost_model.h).
// `threads`: each measurement's compute threads unless "measure:threads=T" says otherwise (the
// threads the plan will run with, as `tune --threads`).
CostModelOptions measure_cost_model_options(int threads = 1);

// cpu_model_name(), cpu_isa_flags(), machine_fingerprint(): tessera/machine.h.

}  // namespace tessera
