// The verified-choice step of the tuning pipeline (tune.h; the race itself is verified_choice.h):
// the search's plan, and per backend (fallbacks such as ref aside) its `single:<backend>` plan and
// the search over that backend and the fallback ("onednn+ref"), compared end to end; the fastest
// replaces outcome.plan and the figures are recorded in it.
//
// Accuracy (budgeted_partition.h): a contender on a reduced-precision backend (single:onednn_bf16)
// is one only under a budget E > 0, and then only if its end-to-end error on the calibration
// inputs is within E. Under E > 0 every contender's error is measured and recorded in its
// Plan::accuracy, so whichever wins carries its own verified error; the search's plan carries the
// one partition_within_budget measured. A plan over the budget is never returned.
#pragma once

#include <string>
#include <vector>

#include "runtime/budgeted_partition.h"
#include "search/partitioner.h"
#include "tessera/cost_database.h"
#include "tessera/tune.h"

namespace tessera {

// Then the chosen plan is priced in the plan (in_plan_prices.h): its partitions and crossings as
// they run inside it, measured when may_measure, else looked up.
//
// Fills `record` with every contender's figure (nothing when there was nothing to compare or the
// race was undecided), whether the plan was priced in place, and notes (contenders over the
// budget). `may_measure` = false only looks latencies up in `database`.
void verify_plan(const Graph& graph, const std::vector<BackendSpec>& backends, const CostModel& model,
                 const PartitionOptions& options, PartitionOutcome& outcome, CostDatabase* database, bool may_measure,
                 const AccuracyBudget& budget, TuneRecord& record);

}  // namespace tessera
