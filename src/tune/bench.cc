// Bench rows: plans, predicted costs, latencies raced together (see bench.h).
#include "tune/bench.h"

#include <limits>
#include <map>
#include <memory>

#include "tessera/backend_spec.h"
#include "tessera/error.h"
#include "runtime/executor.h"
#include "runtime/latency.h"
#include "runtime/verified_choice.h"

namespace tessera {
std::vector<BenchRow> bench_combinations(const Graph& graph, const std::vector<HostTensor>& inputs,
                                         const std::vector<std::vector<std::string>>& combos,
                                         const CostModel& cost_model, const BenchOptions& options) {
  std::vector<BenchRow> rows(combos.size());
  std::vector<std::unique_ptr<Executor>> executors;   // one per distinct plan
  std::vector<std::optional<size_t>> runs_on(combos.size());
  std::map<std::string, size_t> by_assignment;
  for (size_t i = 0; i < combos.size(); ++i) {
    if (options.progress) options.progress(i);
    BenchRow& row = rows[i];
    row.backends = combos[i];
    try {
      const std::vector<BackendSpec> specs = resolve_backends(combos[i], {});
      TunedPlan tuned = tune_graph(graph, specs, cost_model, options.database, options.tune);
      const Plan& plan = tuned.plan;
      if (options.on_plan) options.on_plan(i, plan);
      row.chosen = plan.verified_choice;
      if (plan.accuracy) row.rel_error = plan.accuracy->verified_error;
      if (cost_model.name() != "mock" && plan.total_cost.is_value()) row.predicted_ms = plan.total_cost.number() * 1e3;
      auto [it, fresh] = by_assignment.emplace(plan_assignment(plan), executors.size());
      if (fresh) executors.push_back(std::make_unique<Executor>(graph, plan));
      runs_on[i] = it->second;
    } catch (const UserError& e) {
      row.error = e.what();
    } catch (const KernelUnsupported& e) {
      row.error = e.what();
    }
  }
  if (executors.empty()) return rows;

  if (options.progress) options.progress(combos.size());
  // tune's race, but every round runs to the end (the timing callback ignores the give-up bar):
  // a plan 3x behind after its first round is not timed again, one 1.5-3x behind once more.
  VerifyOptions race;
  race.repeat = options.repeat;
  // A plan that fails while it runs is a row with an error, as one that fails to build.
  std::vector<std::string> failed(executors.size());
  const std::vector<std::optional<double>> raced = race_contenders(
      std::vector<std::optional<double>>(executors.size()), std::vector<char>(executors.size(), 1),
      [&](size_t e, int repeat, double) {
        if (!failed[e].empty()) return std::numeric_limits<double>::infinity();
        try {
          return measure_latency(*executors[e], inputs, repeat).median_ms;
        } catch (const UserError& x) {
          failed[e] = x.what();
        } catch (const KernelUnsupported& x) {
          failed[e] = x.what();
        }
        return std::numeric_limits<double>::infinity();
      },
      race);
  for (size_t i = 0; i < combos.size(); ++i) {
    if (!runs_on[i]) continue;
    if (!failed[*runs_on[i]].empty()) rows[i].error = failed[*runs_on[i]];
    else rows[i].measured_ms = raced[*runs_on[i]];
  }
  return rows;
}

}  // namespace tessera
