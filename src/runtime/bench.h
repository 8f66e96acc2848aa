// One row of `tessera bench` (and of tessera.bench in Python): for one backend combination, the
// plan the search chooses, its predicted cost, and the measured end-to-end latency of its
// executor.
//
//   combination "ref,onednn" -> partition_within_budget(graph, those backends) -> Plan
//                            -> options.choose (if set: `tune`'s end-to-end choice, see below)
//                            -> Executor(graph, plan) -> measure_latency(inputs, repeat)
//                            -> BenchRow {backends, predicted_ms, measured_ms, rel_error, error}
//
// A combination that cannot be planned or run (a backend that refuses an op it was given, a
// budget no plan meets) is a row with `error` set and no values, not an exception, so that a
// table of combinations is never lost to one of them; a misspelt backend name is the caller's to
// refuse beforehand (resolve_backends). Costs of "roofline" and "measure" are seconds, shown in
// ms; a mock cost model's units mean no time, so its rows have no predicted_ms.
//
// `choose` lets the caller replace the search's plan the way `partition --cost measure` does
// (verified_choice.h: a single-backend plan that `tune` timed faster end to end wins), so a row of
// a combination that was tuned shows the plan tune returned, not the search's plan tune rejected.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/budgeted_partition.h"
#include "tessera/bench_chart.h"
#include "tessera/cost_model.h"

namespace tessera {

struct BenchOptions {
  std::string model_path;           // written into each plan, and in messages
  std::string search = "collage";
  bool coalesce = true;
  int repeat = 10;                  // timed runs after one warm-up
  CostDatabase* database = nullptr;
  AccuracyBudget budget;            // max_rel_error = 0: fp32 plans
  // Called after the search with the combination's backends; may replace outcome.plan.
  std::function<void(const std::vector<BackendSpec>&, const PartitionOptions&, PartitionOutcome&)> choose;
};

BenchRow bench_combination(const Graph& graph, const std::vector<HostTensor>& inputs, const std::vector<std::string>& backends,
                           const CostModel& cost_model, const BenchOptions& options);

}  // namespace tessera
