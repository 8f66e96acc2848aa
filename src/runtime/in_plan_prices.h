// In-plan prices: a plan's partitions and crossings priced as they run inside the plan.
//
// Terms. A candidate's *isolated* price is measured on the function alone (measure_function.h):
// its inputs freshly written, its weights where the previous timed run of the same function left
// them. In a plan the same function runs after the rest of the network has passed through the
// caches, so its weights (and whatever its neighbours' layouts made of its inputs) come from
// farther away, and plans of many partitions run measurably slower than the sum of their isolated
// prices (docs/benchmarks.md, "Prediction fidelity"). An *in-plan* price is the partition's time measured in
// the plan itself: the executor runs the whole plan and times every call (call_profile.h).
//
//   plan: onednn{conv1..relu4} | xnnpack{dw5} | onednn{conv6..}    isolated 1.10 + 0.20 + 2.40 ms
//   run the plan 5 rounds (>= 200 ms each), call medians of the typical round:  1.19 + 0.22 + 2.59 ms
//   that round's median run 4.08 ms: each call's share of it                   -> 1.21 + 0.23 + 2.64 ms
//   -> partition costs 1.21, 0.23, 2.64; isolated_cost keeps 1.10, 0.20, 2.40
//
// Each round also times the plan's runs without the observer, as the race times them, and that
// median run is the round's level: the observer adds a clock read to every step, which on a plan
// of many small calls is a share of the profiled run the plan does not pay unobserved.
//
// The typical round is the median one, by median run: what `tessera run` reports and what a
// benchmark's median of rounds reads on a machine that others share. (Not the quietest round: a
// minimum finds a quiet tenth of a second and prices a plan below what the runs after it read.) A
// round lasts at least `min_round_ms` by the race's latency, so that it is not one quiet moment
// either. A price is the call's share of that round's median run, not its median alone: a call's
// delays are one-sided, so the medians of many calls sum to less than a typical run of them all,
// and the executor's work between calls is the plan's too.
//
// The clock is plan_run_clock() (run_clock.h), as for the race: at one compute thread a price is
// the CPU time of the call, so a tune under load (other processes holding the cores) prices what
// the plan costs, not how long it waited (a wall-clock price taken under load is a multiple of
// what the plan later runs in).
//
// Crossings (the executor's layout conversions, once per value and layout) are timed the same way
// and replace the boundary costs of their value, shared in proportion to the priced ones.
//
// What it changes: the plan's prediction of itself, not the search. The search still compares
// isolated prices (every candidate of every backend cannot be run inside every plan); the plan
// it returns is verified end to end against the single-backend plans (verified_choice.h), and
// then priced in place, so `total_cost` is what it runs and `isolated_total_cost` what the search
// saw. Graph input and output conversions are not charged (docs/design.md); their share of the run
// goes with them (graph inputs and outputs cross into functions plain, codegen.h, so there are
// such conversions only where one function is called with a graph input and with a computed value).
//
// Reproducible like every measurement: each price is kept in the cost database, keyed by the
// plan's latency key (model hash and partition assignment, verified_choice.h) and the partition's
// index or the crossing value's name (backend "in_plan"). The tuning pipeline (tune.h) measures
// what is missing; with may_measure false it only looks up, and leaves the plan as the search
// priced it when any price is missing. So tune's plan comes back byte for byte.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "tessera/cost_database.h"
#include "tessera/cost_model.h"
#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

struct InPlanOptions {
  bool may_measure = true;   // false: database lookups only
  int rounds = 5;            // rounds of runs; a call's price is its share of the typical round's
                             // median run (the median round by median run)
  int repeat = 10;           // runs per round at least...
  double min_round_ms = 200; // ...and at least this long by end_to_end_ms
  // The plan's end-to-end latency measured before (tune's race), when known. While the quietest
  // round's calls sum to more than `disturbed` times it, the rounds went through a disturbance
  // that outlasted them: more rounds, up to `max_rounds`.
  std::optional<double> end_to_end_ms;
  double disturbed = 1.10;
  int max_rounds = 15;
  // Called on every step of the profiled runs (tests stand a costly observer in with it).
  std::function<void()> profiled_step;
};

// Part of every in-plan price's database key, raised whenever how prices are taken changes so
// that earlier ones are stale: 2 when a round's level became its runs without the observer (the
// profiled runs' level counted a clock read per step).
inline constexpr int kInPlanPriceRevision = 2;

// Runs per round: `repeat`, or more to last min_round_ms by end_to_end_ms (at most 1000).
int in_plan_repeat(const InPlanOptions& options);

// Whether round r (from 0) runs, the quietest round so far with a median run of `quiet_run` ms: the
// first `rounds` always, then while the quietest is `disturbed` times above end_to_end_ms, up to
// max_rounds.
bool in_plan_round_runs(int r, double quiet_run, const InPlanOptions& options);

// Which round's calls are shared out, and the level they are scaled to, from each round's median
// run: the typical round (the median; the lower of the two middle ones for an even count) and its
// median run; or, when even the quietest round is `disturbed` times above end_to_end_ms (a
// disturbance that outlasted max_rounds), the typical round's calls scaled to end_to_end_ms. A
// disturbance slows every call of a round alike, so the calls' shares of the round hold while its
// level does not.
struct InPlanLevel {
  size_t round = 0;
  double run_ms = 0.0;
};
InPlanLevel in_plan_level(const std::vector<double>& round_runs, const InPlanOptions& options);

// Replaces the costs of `plan`'s partitions and boundaries by their in-plan prices and sets
// Plan::isolated_total_cost and each Partition::isolated_cost to what they were. Returns false
// (plan untouched) when a price is neither in `database` nor measurable (may_measure false, or
// the plan does not build here). `graph` must be the model the plan was made for.
bool price_in_plan(const Graph& graph, Plan& plan, CostDatabase* database, const CostModel& model,
                   const InPlanOptions& options = {});

}  // namespace tessera
