// tessera run --against. See plan_race.h.
#include "cli/plan_race.h"

#include <limits>
#include <memory>

#include "runtime/executor.h"
#include "runtime/latency.h"
#include "runtime/verified_choice.h"

namespace tessera::cli {

std::vector<RacedPlan> race_plans(const Graph& graph, const std::vector<std::pair<std::string, Plan>>& plans,
                                  const std::vector<HostTensor>& inputs, int repeat) {
  std::vector<std::unique_ptr<Executor>> executors;
  for (const auto& [path, plan] : plans) executors.push_back(std::make_unique<Executor>(graph, plan));

  // tune's race without its cuts: nobody dropped, no round ended early, every round for all.
  VerifyOptions options;
  options.repeat = repeat;
  options.rounds = kPlanRaceRounds;
  options.max_rounds = kPlanRaceRounds;
  options.drop_above = std::numeric_limits<double>::infinity();
  options.close = std::numeric_limits<double>::infinity();
  options.give_up_above = std::numeric_limits<double>::infinity();
  options.min_paired_rounds = 1;
  options.pacer = 0;
  const std::vector<std::optional<double>> raced = race_contenders(
      std::vector<std::optional<double>>(plans.size()), std::vector<char>(plans.size(), 1),
      [&](size_t i, int round_repeat, double) {
        return measure_latency(*executors[i], inputs, round_repeat, 1, std::numeric_limits<double>::infinity(), plan_run_clock()).median_ms;
      },
      options);

  std::vector<RacedPlan> out;
  for (size_t i = 0; i < plans.size(); ++i) out.push_back(RacedPlan{plans[i].first, raced[i].value_or(0.0)});
  return out;
}

}  // namespace tessera::cli
