// Parallel cost estimation: many CostRequests in, one Cost per request out, in input order.
//
// Before: the search asks for each candidate's cost one at a time, and structurally equal
// candidates (the 12 identical encoder layers of a BERT) are priced again and again.
// After:
//   requests -> dedupe by CostKey (structural hash, backend@version, device fingerprint, model
//               fingerprint; a hash collision is caught by structurally_equal, never merged)
//            -> look up the CostDatabase (hits cost nothing)
//            -> estimate the misses in parallel (tbb::task_arena with `threads` workers),
//               each result written into its slot of a vector by index
//            -> insert the new results (CostModel::estimate_entry: cost, spread, samples) into
//               the database, in index order; Unknown is not stored
//            -> costs[i] for requests[i]
// Because every result lands in a fixed slot and database inserts happen afterwards in a fixed
// order, the output (and the database's log order) is identical for every thread count.
//
// Not needed for correctness: the database (nullptr = no cache) and threads > 1.
// Scale: thousands to tens of thousands of requests per run; dedupe is a std::map over keys.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "tessera/cost.h"
#include "tessera/cost_database.h"
#include "tessera/cost_model.h"

namespace tessera {

struct EstimateOptions {
  int threads = 1;                   // -j N; <= 0 means all cores
  CostDatabase* database = nullptr;  // optional cache, read and written
};

struct EstimateStats {
  size_t requests = 0;     // requests given
  size_t unique = 0;       // distinct functions after dedupe
  size_t cache_hits = 0;   // unique ones found in the database
  size_t estimated = 0;    // unique ones the model priced now
  double wall_ms = 0.0;
};

struct EstimateResult {
  std::vector<Cost> costs;   // costs[i] answers requests[i]
  std::vector<std::optional<double>> errors;   // errors[i]: CostEntry::error of requests[i]'s answer
  EstimateStats stats;
};

// The database key of a request under `model`.
CostKey cost_key(const CostModel& model, const CostRequest& request);

EstimateResult estimate_costs(const CostModel& model, const std::vector<CostRequest>& requests,
                              const EstimateOptions& options = {});

}  // namespace tessera
