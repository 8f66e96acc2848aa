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
// How it is timed: a race in interleaved rounds, so that drift on a shared machine hits all alike,
// by plan_run_clock() (run_clock.h: CPU time at one compute thread, wall time above).
//   round 1      every contender not in the database: `repeat` runs, the median
//   rounds 2..R  only those within `drop_above` of the best so far (single:eigen at 30x the
//                fastest cannot win, and its seconds per round would stretch the time between the
//                rounds of the close ones), and those timed once and under `give_up_above` (one
//                disturbed round must not drop the best plan); in any round, a contender whose
//                first run takes `give_up_above` times the best so far stops after that run (a
//                plan on reference kernels, a second a run against milliseconds, would otherwise
//                take most of the tune)
//   rounds R+1.. while two or more are within `close` of the best, only those, up to
//                `max_rounds` (two plans a few percent apart need several rounds to be told apart)
// From round 2 a round lasts at least `min_round_ms` by the best latency so far (more runs for a
// fast model), and the rounds alternate direction, so that no contender always follows the same
// one. The schedule above judges each contender by its own typical round (the lower median of its
// round medians: of two rounds, one disturbed, the other).
//
// The figures it returns are paired: the *pacer*, the contender timed in the most rounds (then the
// fastest), keeps its typical round; every contender that ran at least `min_paired_rounds` rounds
// beside it reads the pacer's figure times the median ratio of their two round medians, round by
// round. Two contenders timed one after the other in a round see the same machine; two typical
// rounds need not. Without pairing, a tenant that takes a core for a few rounds decides the race
// when it covers more of one contender's rounds than the other's.
//
//   PaddleOCR cls, 2 threads, round medians in ms (a neighbour took a core from round 3 into round 6)
//     onednn+ref:merged  0.49 0.42 0.55 0.54 0.55 0.41 0.40 0.39   typical 0.42
//     single:onednn      0.50 0.42 0.51 0.51 0.53 0.52 0.37 0.37   typical 0.50
//     single / mixed     1.01 1.01 0.94 0.94 0.96 1.27 0.94 0.94   median 0.95 -> 0.40 against 0.42
//
// Why not the quietest round: a minimum over rounds rewards whoever met a quiet moment, and on a
// sub-millisecond model a round of 10 runs is one moment, so two tunes of the same model would
// ship different plans, each "won" by a lucky round that a later `run --against`
// (src/cli/plan_race.h) does not confirm.
//
// Who wins: the fastest single-backend plan, unless a mixed plan is `tie_margin` faster still.
// That is the promise users check ("never worse than one backend"); at a tie the plan with fewer
// crossings ships.
//
//   contenders: collage (onednn+ref+eigen) 12.9 ms, single:onednn 12.4 ms, single:eigen 31 ms
//   -> single:onednn, 1.04x faster than the mixed plan; the plan records all three figures
//
// A race win of a few percent is also what the machine's noise makes of two plans that cost the
// same: shufflenet_v2's mix (oneDNN with the final Gemm on eigen) won tune's race by 4.8% over
// single:onednn and lost a later race by 3%. So a mixed plan less than `clear_margin` ahead in the
// race wins only where the search's own prices (the contenders' isolated total_cost, measured
// apart from the race) also put it tie_margin ahead of that single-backend plan; two measurements
// agree, or the single-backend plan ships. A mix clear_margin ahead wins on the race alone (the
// search may misprice a crossing, not a 10% gain end to end).
//
//   race: collage 2.26 ms, single:onednn 2.37 ms (4.8% ahead); search: 2.33 against 2.33 ms
//   -> single:onednn
//
// The search's prices lean towards mixes (each partition is priced alone, its inputs warm in
// cache; in the plan it reads them after its producers: mobilenet_v3_large's mix priced 2.93 ms
// alone against its single plan's 3.2, 3.16 in the plan), so a narrow win must also survive a
// second race of the two plans alone, paced by the single plan, when both were timed in this
// call: the mix keeps the larger of its two ratios to the single plan (that is the figure the
// database keeps, so a rerun from the database makes the same choice).
//
//   race 1: mix / single 0.93 (pass); race 2, the two alone: 1.04 -> the mix reads 1.04: single
// Reproducible: each end-to-end latency is kept in the cost database like any measurement, keyed
// by the model's structural hash and the contender's partition assignment (backend "plan"), the
// device fingerprint and the measure model's fingerprint. Every front end runs the race through
// the tuning pipeline (tune.h), which measures what is missing; with VerifyOptions::may_measure
// false it only looks up, and makes the same choice when every contender is in the database (else
// it keeps the search's plan). So tune's plan comes back byte for byte.
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
  int rounds = 7;              // interleaved rounds at most; a contender's latency is its typical round
  int repeat = 10;             // timed runs per round (median) at least...
  double min_round_ms = 25;    // ...and from round 2 at least this long by the best latency so far
  int max_repeat = 1000;       // (at most this many runs)
  int min_paired_rounds = 3;   // rounds beside the pacer for a paired figure (else its own typical round)
  std::optional<size_t> pacer; // the pacer, when set (else the one timed in the most rounds, then the fastest)
  double drop_above = 1.5;     // contenders this many times the best run no more rounds (one timed
                               // once and under give_up_above runs a second one first)
  double give_up_above = 3.0;  // a round whose first run takes this many times the best so far ends there
  double close = 1.03;         // after `rounds`, contenders this close to the best race on...
  int max_rounds = 15;         // ...up to this many rounds
  double tie_margin = 0.02;    // a mixed plan must be this much faster than the best single-backend plan
  double clear_margin = 0.10;  // ...and unless this much faster, the search's prices must agree
  bool confirm_narrow = true;  // a narrow win among plans timed now is raced again, the two alone
};

// The race's schedule on its own (what choose_fastest_plan runs with executors): `time_round(i,
// repeat, give_up_above_ms)` times one round of `repeat` runs of contender i and returns their
// median in ms, or the first run alone when that run took longer than give_up_above_ms
// (`give_up_above` times the best latency known when the round starts; infinite while none is
// known); `known[i]` is a latency from the database (then i is not timed). Returns each
// contender's paired figure (or its own typical round, or its known latency; none when it was
// never timed, e.g. time_round(i) threw before).
std::vector<std::optional<double>> race_contenders(const std::vector<std::optional<double>>& known,
                                                   const std::vector<char>& to_time,
                                                   const std::function<double(size_t, int, double)>& time_round,
                                                   const VerifyOptions& options);

// The winner among contenders whose latencies are known (see the header comment): the fastest
// single-backend plan unless a mixed one is tie_margin faster (and, unless clear_margin faster,
// tie_margin cheaper by the two plans' total_cost, where both are positive values); among mixed
// plans, the earlier unless a later one is tie_margin faster. Contenders without a latency cannot
// win.
size_t pick_contender(const std::vector<PlanContender>& contenders, double tie_margin, double clear_margin = 0.10);

// A narrow win: the fastest mixed plan ahead of the fastest single-backend plan by at least
// tie_margin and less than clear_margin (by latency_ms). choose_fastest_plan races such a pair
// again when it timed both now.
struct NarrowWin {
  size_t mixed, single;
};
std::optional<NarrowWin> narrow_win(const std::vector<PlanContender>& contenders, double tie_margin,
                                   double clear_margin);

// Where narrow_win finds a pair and both were timed in this call (measured_now), races the two
// again, alone (race_contenders with the single plan as pacer), and sets the mix's latency_ms to
// the single plan's times the larger of its two ratios to it.
void confirm_narrow_win(std::vector<PlanContender>& contenders,
                        const std::function<double(size_t, int, double)>& time_round, const VerifyOptions& options);

// What distinguishes two plans at run time: which backend runs which nodes, cut how
// ("onednn:0,1,2,;ref:3,;"). Equal texts, one executor's work.
std::string plan_assignment(const Plan& plan);

// The database key of one contender's end-to-end latency (and, derived from it, of its in-plan
// prices: in_plan_prices.h). It includes kPlanRunRevision, raised whenever a change to how plans
// run or are priced in place makes earlier figures stale: 4 when plans at one compute thread
// began to be timed in CPU time (run_clock.h; earlier figures are wall time, load included);
// 3 when the race's latency became the typical round instead of the quietest; 2 when graph inputs
// and outputs began to cross into functions plain (codegen.h) and in-plan prices came from the
// typical round.
inline constexpr int kPlanRunRevision = 4;
CostKey plan_latency_key(const Graph& graph, const Plan& plan, const CostModel& model);

// Drops contenders whose partition assignment equals an earlier one's (the one kept takes a
// dropped single-backend label: it is that plan), fills latency_ms, and returns the index of the
// winner (pick_contender; 0 when any contender's latency is unknown). `graph` must be the model
// the plans were made for.
size_t choose_fastest_plan(const Graph& graph, std::vector<PlanContender>& contenders, CostDatabase* database,
                           const CostModel& model, const VerifyOptions& options = {});

}  // namespace tessera
