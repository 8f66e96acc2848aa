// In-plan prices of a plan's partitions and crossings. See src/runtime/in_plan_prices.h.
#include "runtime/in_plan_prices.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <utility>

#include "runtime/call_profile.h"
#include "runtime/executor.h"
#include "runtime/latency.h"
#include "runtime/run_clock.h"
#include "support/median.h"
#include "runtime/model_data.h"
#include "ir/structural_hash.h"
#include "runtime/verified_choice.h"

namespace tessera {
namespace {

// The plan's measured prices: seconds per partition index, and per crossing value name.
struct Prices {
  std::vector<std::optional<double>> partitions;
  std::map<std::string, double> crossings;
};

CostKey price_key(const CostKey& plan_key, const std::string& what) {
  const std::string revision = "|in-plan " + std::to_string(kInPlanPriceRevision);
  return CostKey{hash_hex(fnv1a64(plan_key.hash + revision + "|" + what)), "in_plan", plan_key.device, plan_key.model};
}

// The values the plan charges crossings on, by name, with the sum of their priced boundary costs
// (the executor's conversions of graph inputs and outputs are not among them).
std::map<std::string, double> charged_values(const Graph& graph, const Plan& plan) {
  std::map<std::string, double> charged;
  for (const Boundary& b : plan.boundaries)
    if (b.cost.is_value() && b.cost.number() > 0) charged[graph.value(b.value).name] += b.cost.number();
  return charged;
}

std::optional<Prices> measure(const Graph& graph, const Plan& plan, const InPlanOptions& options) {
  std::unique_ptr<Executor> executor;
  try {
    executor = std::make_unique<Executor>(graph, plan);
  } catch (const std::exception&) {
    return std::nullopt;   // a plan that does not build here has no in-plan prices
  }
  const std::vector<HostTensor> inputs = model_inputs(graph, 0);
  // Every round's calls and median run; the rounds go on while even the quietest is disturbed
  // (a 2-thread plan on a shared 2-core machine: five rounds of mobilenet_v2's XNNPACK function
  // summed 5.9 ms against 3.9-4.5 in quiet), and the typical round is shared out. A round's run is
  // timed without the observer, right after its profiled runs: the observer's clock read per step
  // is part of every profiled run, and on a plan of many small calls it is a share of its own
  // (silero VAD over ref,xnnpack: 0.35 ms a profiled run, 0.30 ms a plain one).
  std::vector<std::vector<CallProfile>> rounds;
  std::vector<double> round_runs;
  double quiet_run = 0.0;   // the quietest round's median run, ms
  const int repeat = in_plan_repeat(options);
  const RunClock clock = plan_run_clock();
  for (int r = 0; in_plan_round_runs(r, quiet_run, options); ++r) {
    rounds.push_back(profile_calls(*executor, inputs, repeat, nullptr, options.profiled_step));
    round_runs.push_back(measure_latency(*executor, inputs, repeat, 0, std::numeric_limits<double>::infinity(), clock)
                             .median_ms);
    quiet_run = r == 0 ? round_runs.back() : std::min(quiet_run, round_runs.back());
  }
  const InPlanLevel level = in_plan_level(round_runs, options);
  std::vector<CallProfile>& calls = rounds[level.round];
  attach_plan_costs(calls, *executor, plan);
  // Each call's price is its share of the level: its median, scaled so that the calls sum to it.
  // A call's delays are one-sided (an interrupt, a cache refill), so the medians of many calls sum
  // to less than a typical run (shufflenet_v2's 63 partitions: 4.24 ms against runs of 4.5-4.8),
  // and the executor's work between calls belongs to the plan too.
  double sum = 0.0;
  for (const CallProfile& call : calls) sum += call.median_ms;
  const double scale = sum > 0.0 ? level.run_ms / sum : 1.0;
  Prices prices;
  prices.partitions.resize(plan.partitions.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    const double s = calls[i].median_ms * scale * 1e-3;
    if (calls[i].partition >= 0) {
      auto& p = prices.partitions[static_cast<size_t>(calls[i].partition)];
      p = p.value_or(0.0) + s;
    } else if (calls[i].backend == "(crossing)") {
      prices.crossings[calls[i].label] += s;
    }
  }
  return prices;
}

// Whether the quietest round so far is still `disturbed` times above the race's latency.
bool still_disturbed(double quiet_run, const InPlanOptions& options) {
  return options.end_to_end_ms && quiet_run > *options.end_to_end_ms * options.disturbed;
}

}  // namespace

bool in_plan_round_runs(int r, double quiet_run, const InPlanOptions& options) {
  if (r < std::max(1, options.rounds)) return true;
  return r < options.max_rounds && still_disturbed(quiet_run, options);
}

int in_plan_repeat(const InPlanOptions& options) {
  int repeat = std::max(1, options.repeat);
  if (options.end_to_end_ms && *options.end_to_end_ms > 0.0)
    repeat = std::max(repeat, static_cast<int>(std::min(1000.0, std::ceil(options.min_round_ms / *options.end_to_end_ms))));
  return repeat;
}

InPlanLevel in_plan_level(const std::vector<double>& round_runs, const InPlanOptions& options) {
  if (round_runs.empty()) return {};
  std::vector<size_t> order(round_runs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return round_runs[a] < round_runs[b]; });
  const size_t typical = order[(order.size() - 1) / 2];
  const double quiet_run = round_runs[order.front()];
  return {typical, still_disturbed(quiet_run, options) ? *options.end_to_end_ms : round_runs[typical]};
}

bool price_in_plan(const Graph& graph, Plan& plan, CostDatabase* database, const CostModel& model,
                   const InPlanOptions& options) {
  if (plan.partitions.empty() || plan.isolated_total_cost) return false;
  const CostKey plan_key = plan_latency_key(graph, plan, model);
  std::vector<CostKey> keys;
  for (size_t k = 0; k < plan.partitions.size(); ++k) keys.push_back(price_key(plan_key, "partition " + std::to_string(k)));
  const std::map<std::string, double> charged = charged_values(graph, plan);
  for (const auto& [v, sum] : charged) keys.push_back(price_key(plan_key, "crossing " + v));

  // From the database where every price is known; else measured (all of them, in one run).
  std::vector<std::optional<double>> seconds(keys.size());
  bool known = database != nullptr;
  for (size_t i = 0; known && i < keys.size(); ++i) {
    auto e = database->lookup(keys[i]);
    if (e && e->cost.is_value()) seconds[i] = e->cost.seconds();
    else known = false;
  }
  if (!known) {
    if (!options.may_measure) return false;
    std::optional<Prices> measured = measure(graph, plan, options);
    if (!measured) return false;
    for (size_t k = 0; k < plan.partitions.size(); ++k) seconds[k] = measured->partitions[k];
    size_t c = plan.partitions.size();
    for (const auto& [v, sum] : charged) {
      auto it = measured->crossings.find(v);
      seconds[c++] = it == measured->crossings.end() ? 0.0 : it->second;
    }
    for (const auto& s : seconds)
      if (!s) return false;   // a partition without a call (nothing ran it): no in-plan price
    if (database) {
      const int64_t samples = static_cast<int64_t>(std::max(1, options.rounds)) * in_plan_repeat(options);
      for (size_t i = 0; i < keys.size(); ++i) database->insert(keys[i], CostEntry{Cost::value(*seconds[i]), 0.0, samples});
    }
  }

  // Apply: partitions, then each crossing value's measured time over its priced boundaries.
  Cost isolated = plan.total_cost;
  for (size_t k = 0; k < plan.partitions.size(); ++k) {
    Partition& p = plan.partitions[k];
    p.isolated_cost = p.cost;
    p.cost = Cost::value(*seconds[k]);
  }
  std::map<std::string, double> in_plan;   // value name -> its conversions' time in the plan
  size_t c = plan.partitions.size();
  for (const auto& [v, sum] : charged) in_plan[v] = *seconds[c++];
  plan.boundary_cost = Cost::zero();
  for (Boundary& b : plan.boundaries) {
    const std::string& name = graph.value(b.value).name;
    if (b.cost.is_value() && b.cost.number() > 0) b.cost = Cost::value(in_plan[name] * b.cost.number() / charged.at(name));
    plan.boundary_cost += b.cost;
  }
  plan.total_cost = Cost::zero();
  for (const Partition& p : plan.partitions) plan.total_cost += p.cost;
  plan.total_cost += plan.transfer_cost;
  plan.total_cost += plan.boundary_cost;
  plan.isolated_total_cost = isolated;
  return true;
}

}  // namespace tessera
