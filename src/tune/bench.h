// The rows of `tessera bench` (and of tessera.bench in Python): for each backend combination, the
// plan the tuning pipeline returns for it, its predicted cost, and the measured end-to-end latency
// of its executor.
//
//   every combination "ref,onednn" -> tune_graph(graph, those backends) (tune.h) -> Plan
//                                  -> Executor(graph, plan)
//   then the executors, raced       -> race_contenders (verified_choice.h) -> measured_ms
//
// A combination is tuned exactly as `tessera tune --backends <that combination>` tunes it: same
// pipeline, same cost database, same verdicts, so with measured costs its row shows the plan tune
// ships for those backends (a single-backend plan where that won tune's race) and its in-plan
// price, not the search's sum.
//
// Timed as tune times plans (plan_run_clock(), runtime/run_clock.h): CPU time per run at one compute
// thread, so that a row's measured figure and its predicted one (in-plan prices taken the same
// way) compare whatever the machine's load in their minutes; wall time above one thread.
//
// Measured together, not one after another. Timed one combination at a time, each figure is one
// moment of a shared machine, and two rows compare two moments. So every plan is compiled first
// and then they are timed in tune's race: interleaved rounds (the first of `repeat` runs, later
// ones of at least `round_ms`, alternating direction), every figure paired with the pacer's round
// by round. Unlike tune's race no round is cut short and no plan is dropped: every row's figure is
// compared with its prediction, so every plan runs every round (bench_race_options), its later
// rounds as long as the fastest plan's or `round_ms` of its own runs, whichever is shorter, at
// least 3 runs (bench_round_runs). Tune's race drops a plan 1.5x behind the best after two rounds;
// its figure was then the better of two rounds, unpaired, where its in-plan price is the median of
// five rounds of 200 ms: silero VAD's oneDNN plan (1.6x the mix) and convnext_tiny's XNNPACK plan
// (10x oneDNN's) read 0.79-0.87 of their predictions at load 11-14 while the plans the race kept
// read 0.93-1.09. Combinations whose plans are the same assignment share one executor and one
// figure.
//
// A combination that cannot be planned or run (a backend that refuses an op it was given, a
// budget no plan meets) is a row with `error` set and no values, not an exception, so that a
// table of combinations is never lost to one of them; a misspelt backend name is the caller's to
// refuse beforehand (resolve_backends). Steering (TuneOptions::steering) applies to every
// combination: a --forbid of a backend a combination lacks is dropped for it, a --pin onto one
// makes that combination's row an error; the caller checks the rules against every backend named
// beforehand. Costs of "roofline" and "measure" are seconds, shown in
// ms; a mock cost model's units mean no time, so its rows have no predicted_ms.
//
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/bench_chart.h"
#include "tessera/cost_model.h"
#include "tessera/host_tensor.h"
#include "tessera/tune.h"
#include "runtime/verified_choice.h"

namespace tessera {

struct BenchOptions {
  TuneOptions tune;                 // how each combination is tuned (model_path, search, budget, ...)
  CostDatabase* database = nullptr;
  int repeat = 10;                  // timed runs of a plan's first round (after one warm-up)
  double round_ms = 200;            // later rounds: this long by the fastest plan (as in-plan rounds)
  // Called before combination i is planned, and with i = combos.size() before the race (progress).
  std::function<void(size_t)> progress;
  // Called with combination i's plan once it is tuned (bench --plan-dir writes it).
  std::function<void(size_t, const Plan&)> on_plan;
};

// One row per combination, in the order given.
std::vector<BenchRow> bench_combinations(const Graph& graph, const std::vector<HostTensor>& inputs,
                                         const std::vector<std::vector<std::string>>& combos,
                                         const CostModel& cost_model, const BenchOptions& options);

// The race's options for bench: tune's, with `repeat` runs in round 1 and later rounds of at least
// `round_ms` by the fastest plan, and no plan dropped (every plan runs every round).
VerifyOptions bench_race_options(int repeat, double round_ms);

// Runs of one plan's round after the first: the race's `race_repeat` (the round's length by the
// fastest plan), at most `round_ms` of the plan's own runs by its first round `own_ms`, at least 3.
int bench_round_runs(int race_repeat, double own_ms, double round_ms);

// predicted_ms / measured_ms, when both are known (and measured_ms > 0).
std::optional<double> predicted_over_measured(const BenchRow& row);

// The all-backend row against the best single-backend row, both raced together. A row is
// single-backend when its combination names one backend besides `ref` (the fallback every
// combination may take), or `ref` alone; the all-backend row is the one naming the most backends
// (the first of them), when it names more than any single-backend row. Returns the index of the
// best (fastest measured) single-backend row and best_single / all, or nullopt when either row is
// missing or unmeasured.
struct AllVersusSingle {
  size_t all = 0;
  size_t single = 0;
  double speedup = 0.0;   // single measured_ms / all measured_ms: >= 1 when the mix is no slower
};
std::optional<AllVersusSingle> all_versus_best_single(const std::vector<BenchRow>& rows);

}  // namespace tessera
