// The verified-choice step shared by `tune` and `partition --cost measure` (verified_choice.h):
// the search's plan and one `single:<backend>` plan per backend (fallbacks such as ref aside)
// compared end to end; the fastest replaces outcome.plan and the figures are recorded in it.
#pragma once

#include <string>
#include <vector>

#include "search/partitioner.h"
#include "tessera/cost_database.h"

namespace tessera::cli {

// Returns one line per contender for the user ("collage 12.31 ms (measured)"), or nothing when
// there was nothing to compare. `may_measure` = false only looks latencies up in `database`.
std::vector<std::string> verify_plan(const Graph& graph, const std::vector<BackendSpec>& backends,
                                     const CostModel& model, const PartitionOptions& options,
                                     PartitionOutcome& outcome, CostDatabase* database, bool may_measure);

}  // namespace tessera::cli
