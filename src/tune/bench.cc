// Bench rows: plans, predicted costs, latencies raced together (see bench.h).
#include "tune/bench.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "tessera/backend_spec.h"
#include "tessera/error.h"
#include "runtime/executor.h"
#include "runtime/latency.h"
#include "runtime/run_clock.h"
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
      // A --forbid of a backend the combination lacks holds already; a --pin onto one makes the
      // combination impossible: the row's error.
      TuneOptions tune = options.tune;
      auto lacks = [&](const SteeringRule& r) { return std::find(combos[i].begin(), combos[i].end(), r.backend) == combos[i].end(); };
      for (const SteeringRule& r : tune.steering)
        if (r.kind == SteeringRule::Kind::pin && lacks(r))
          throw UserError(options.tune.model_path, "pin " + r.text(), r.backend + " is not in this combination");
      std::erase_if(tune.steering, lacks);
      TunedPlan tuned = tune_graph(graph, specs, cost_model, options.database, tune);
      const Plan& plan = tuned.plan;
      if (options.on_plan) options.on_plan(i, plan);
      row.chosen = plan.verified_choice;
      if (plan.accuracy) row.rel_error = plan.accuracy->verified_error;
      if (cost_model.prices_in_seconds() && plan.total_cost.is_value()) row.predicted_ms = plan.total_cost.number() * 1e3;
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
  // tune's race, but every round runs to the end (the timing callback ignores the give-up bar) and
  // every plan runs every round, a slow one for at most round_ms of its own runs (bench.h).
  const VerifyOptions race = bench_race_options(options.repeat, options.round_ms);
  const RunClock clock = plan_run_clock();   // as tune's race and in-plan prices (run_clock.h)
  // A plan that fails while it runs is a row with an error, as one that fails to build.
  std::vector<std::string> failed(executors.size());
  std::vector<std::optional<double>> first_round(executors.size());   // each plan's, ms
  const std::vector<std::optional<double>> raced = race_contenders(
      std::vector<std::optional<double>>(executors.size()), std::vector<char>(executors.size(), 1),
      [&](size_t e, int repeat, double) {
        if (!failed[e].empty()) return std::numeric_limits<double>::infinity();
        try {
          if (first_round[e]) repeat = bench_round_runs(repeat, *first_round[e], options.round_ms);
          const double ms =
              measure_latency(*executors[e], inputs, repeat, 1, std::numeric_limits<double>::infinity(), clock).median_ms;
          if (!first_round[e]) first_round[e] = ms;
          return ms;
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
    rows[i].clock = run_clock_name(clock);
  }
  return rows;
}

VerifyOptions bench_race_options(int repeat, double round_ms) {
  VerifyOptions race;
  race.repeat = repeat;
  race.min_round_ms = round_ms;
  race.drop_above = std::numeric_limits<double>::infinity();
  return race;
}

int bench_round_runs(int race_repeat, double own_ms, double round_ms) {
  const double own = own_ms > 0.0 ? std::ceil(round_ms / own_ms) : double(race_repeat);
  return std::max(3, static_cast<int>(std::min(double(race_repeat), own)));
}

std::optional<double> predicted_over_measured(const BenchRow& row) {
  if (!row.predicted_ms || !row.measured_ms || !(*row.measured_ms > 0)) return std::nullopt;
  return *row.predicted_ms / *row.measured_ms;
}

std::optional<AllVersusSingle> all_versus_best_single(const std::vector<BenchRow>& rows) {
  auto others = [](const BenchRow& r) {
    size_t n = 0;
    for (const std::string& b : r.backends) n += b != "ref";
    return n;
  };
  std::optional<size_t> all, single;
  size_t widest_single = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (others(rows[i]) <= 1) widest_single = std::max(widest_single, rows[i].backends.size());
    if (!all || rows[i].backends.size() > rows[*all].backends.size()) all = i;
  }
  if (!all || rows[*all].backends.size() <= widest_single || !rows[*all].measured_ms) return std::nullopt;
  for (size_t i = 0; i < rows.size(); ++i)
    if (others(rows[i]) <= 1 && rows[i].measured_ms && (!single || *rows[i].measured_ms < *rows[*single].measured_ms)) single = i;
  if (!single || !(*rows[*all].measured_ms > 0)) return std::nullopt;
  return AllVersusSingle{*all, *single, *rows[*single].measured_ms / *rows[*all].measured_ms};
}

}  // namespace tessera
