// Verified choice: the search's plan against the best single-backend plans, measured end to end.
//
// Terms. A *contender* is a complete plan for the model: the search's mixed plan, and for every
// backend B of the run the plan `single:B` (B plus the fallback, as `tessera partition --search
// single:B` builds it from the same costs). The search is optimal for its cost model; the cost
// model is not the machine. So before a tuned plan ships, every distinct contender is compiled
// and timed end to end (the executor, seeded inputs, interleaved rounds so that drift on a shared
// machine hits all alike), and the fastest is returned. The mixed plan keeps ties within
// `tie_margin` (it is what the search believes in).
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
// users check ("never worse than one backend"), and their number grows with backends, not nodes.
#pragma once

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
  std::optional<double> latency_ms;      // filled by choose_fastest_plan when known
  bool measured_now = false;             // measured in this call (not from the database)
  std::string failed;                    // why it could not run here (then it cannot win)
};

struct VerifyOptions {
  bool may_measure = true;     // false: database lookups only
  int rounds = 3;              // interleaved rounds; a contender's latency is the median of its rounds
  int repeat = 10;             // timed runs per round (median)
  double tie_margin = 0.01;    // the first contender wins unless another is this much faster
};

// The database key of one contender's end-to-end latency.
CostKey plan_latency_key(const Graph& graph, const Plan& plan, const CostModel& model);

// Drops contenders whose partition assignment equals an earlier one's, fills latency_ms, and
// returns the index of the fastest (0 when any contender's latency is unknown). `graph` must be
// the model the plans were made for.
size_t choose_fastest_plan(const Graph& graph, std::vector<PlanContender>& contenders, CostDatabase* database,
                           const CostModel& model, const VerifyOptions& options = {});

}  // namespace tessera
