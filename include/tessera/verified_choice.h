// Verified choice: the search's plan against the best single-backend plans, measured end to end.
//
// Terms. A *contender* is a complete plan for the model: the search's mixed plan (and its merged
// variant), and for every backend B of the run the plan `single:B` (B plus the fallback, as
// `tessera partition --search single:B` builds it from the same costs) and "B+ref", the search
// over B and the fallback alone (with its merged variant): what `tessera partition --backends
// ref,B` weighs, so that command decides from the same verdicts. The search is optimal for
// its cost model; the cost model is not the machine. So before a tuned plan ships, every distinct
// contender is compiled and timed end to end (the executor, seeded inputs), and the fastest is
// returned.
//
// How it is timed: a race in interleaved rounds, so that drift on a shared machine hits all alike.
//   round 1      every contender not in the database: `repeat` runs, the median
//   rounds 2..R  only those within `drop_above` of the best so far (single:eigen at 30x the
//                fastest cannot win, and its seconds per round would stretch the time between the
//                rounds of the close ones), and those timed once and under `give_up_above` (one
//                disturbed round must not drop the best plan: squeezenet's single:onednn read
//                6.3 ms in its only round at 2 threads against 3.9 for the nearly identical
//                winner); in any round, a contender whose first run takes
//                `give_up_above` times the best so far stops after that run (resnet18's eigen and
//                halide plans, 1.4 s a run against 21 ms, ran 11 runs each: tune took 149 s, 62 after)
//   rounds R+1.. while two or more are within `close` of the best, only those, up to
//                `max_rounds` (efficientnet_b0's single:onednn and single:xnnpack timed 12.91
//                and 12.97 ms after 7 rounds, while separate processes put XNNPACK 3-5% ahead)
// A contender's latency is its quietest round (the least median): noise on a shared machine only
// adds time, and a burst that covers one contender's round in three must not decide.
//
// Who wins: the fastest single-backend plan, unless a mixed plan is `tie_margin` faster still.
// That is the promise users check ("never worse than one backend"); at a tie the plan with fewer
// crossings ships.
//
//   contenders: collage (onednn+ref+eigen) 12.9 ms, single:onednn 12.4 ms, single:eigen 31 ms
//   -> single:onednn, 1.04x faster than the mixed plan; the plan records all three figures
//
// Reproducible: each end-to-end latency is kept in the cost database like any measurement, keyed
// by the model's structural hash and the contender's partition assignment (backend "plan"), the
// device fingerprint and the measure model's fingerprint. `tune` measures what is missing;
// `partition --cost measure --cache DB` only looks up, and makes the same choice when every
// contender is in the database (else it keeps the search's plan). So tune's plan comes back byte
// for byte.
//
// Not needed for correctness: contenders other than single-backend plans. Those are the promise
// users check, and their number grows with backends, not nodes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/cost_database.h"
#include "tessera/cost_model.h"
#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

struct PlanContender {
  std::string label;                     // "collage", "single:onednn"
  Plan plan;
  bool single_backend = false;           // a `single:B` plan (wins ties against mixed plans)
  std::optional<double> latency_ms;      // filled by choose_fastest_plan when known
  bool measured_now = false;             // measured in this call (not from the database)
  std::string failed;                    // why it could not run here (then it cannot win)
};

struct VerifyOptions {
  bool may_measure = true;     // false: database lookups only
  int rounds = 7;              // interleaved rounds at most; a contender's latency is its quietest round
  int repeat = 10;             // timed runs per round (median)
  double drop_above = 1.5;     // contenders this many times the best run no more rounds (one timed
                               // once and under give_up_above runs a second one first)
  double give_up_above = 3.0;  // a round whose first run takes this many times the best so far ends there
  double close = 1.03;         // after `rounds`, contenders this close to the best race on...
  int max_rounds = 15;         // ...up to this many rounds
  double tie_margin = 0.02;    // a mixed plan must be this much faster than the best single-backend plan
};

// The race's schedule on its own (what choose_fastest_plan runs with executors): `time_round(i,
// give_up_above_ms)` times one round of contender i and returns its median in ms, or the first
// run alone when that run took longer than give_up_above_ms (`give_up_above` times the best
// latency known when the round starts; infinite while none is known); `known[i]` is a latency
// from the database (then i is not timed). Returns each contender's quietest round (or its known latency;
// none when it was never timed, e.g. time_round(i) threw before).
std::vector<std::optional<double>> race_contenders(const std::vector<std::optional<double>>& known,
                                                   const std::vector<char>& to_time,
                                                   const std::function<double(size_t, double)>& time_round,
                                                   const VerifyOptions& options);

// The winner among contenders whose latencies are known (see the header comment): the fastest
// single-backend plan unless a mixed one is tie_margin faster; among mixed plans, the earlier
// unless a later one is tie_margin faster. Contenders without a latency cannot win.
size_t pick_contender(const std::vector<PlanContender>& contenders, double tie_margin);

// The database key of one contender's end-to-end latency (and, derived from it, of its in-plan
// prices: in_plan_prices.h). It includes kPlanRunRevision, raised whenever a change to how plans
// run or are priced in place makes earlier figures stale: 2 when graph inputs and outputs began
// to cross into functions plain (codegen.h) and in-plan prices came from the typical round.
inline constexpr int kPlanRunRevision = 2;
CostKey plan_latency_key(const Graph& graph, const Plan& plan, const CostModel& model);

// Drops contenders whose partition assignment equals an earlier one's (the one kept takes a
// dropped single-backend label: it is that plan), fills latency_ms, and returns the index of the
// winner (pick_contender; 0 when any contender's latency is unknown). `graph` must be the model
// the plans were made for.
size_t choose_fastest_plan(const Graph& graph, std::vector<PlanContender>& contenders, CostDatabase* database,
                           const CostModel& model, const VerifyOptions& options = {});

}  // namespace tessera
