// The partition pipeline: model Graph + backends + cost model + search name -> Plan.
//
// One straight function, each step a plain call on the previous step's value:
//
//   graph -> DataflowIndex
//         -> candidates: every backend's PartitionRule (backend_spec.h), merged, sorted, deduped,
//                        then steered (--pin / --forbid, steering.h): nothing else is priced
//         -> functions: extract_function + structural_hash per candidate (parallel, by slot)
//         -> costs: estimate_costs (parallel over distinct functions, cost database if given)
//         -> coverage check: a node no usable candidate contains is a UserError
//         -> search: collage | exhaustive | greedy | single:<backend>
//         -> partitions, coalesced unless disabled, function hashes, plan order and names
//         -> [measure_wholes] coalesced partitions priced as wholes, search again (measured_wholes.h)
//
// Determinism: candidates are in candidate_less order, costs land in fixed slots, the searches
// break ties by total orders; nothing depends on thread count, hashing or timing except the
// *_ms statistics (which the plan writer leaves out unless asked).
//
// The outcome keeps the index, candidates and costs so that --explain, tests and benchmarks can
// look behind the plan without recomputing. The graph must outlive the outcome.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "search/search_problem.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_database.h"
#include "tessera/cost_model.h"
#include "cost_models/estimator.h"
#include "tessera/graph.h"
#include "partition/partition_rule.h"
#include "tessera/plan.h"
#include "search/steering.h"

namespace tessera {

struct PartitionOptions {
  std::string model_path;            // written into the plan and used in error messages
  std::string search = "collage";    // collage | greedy | exhaustive | single:<backend>
  int threads = 1;                   // -j N (<= 0: all cores)
  CostDatabase* database = nullptr;  // --cache DB
  bool coalesce = true;              // false: --no-coalesce
  int exhaustive_max_nodes = 24;     // --search exhaustive refuses bigger graphs
  // Price coalesced partitions as wholes and search again (measured_wholes.h); on for measured
  // costs, where a whole's price is what it runs at. Needs coalesce.
  bool measure_wholes = false;
  int max_whole_rounds = 4;
  // Collage only: the candidates the search may use (CollageOptions::allowed), decided each time
  // the costed problem is searched (again after measured wholes join it); unset = all. The
  // accuracy budget sets it (src/search/accuracy_budget.h).
  std::function<std::vector<char>(const SearchProblem&)> allow;
  // --search-memory: bytes the collage search may hold (bounded_search.h); 0 = the default, a
  // fraction of the machine's memory. Past it the search falls back and says so.
  size_t search_memory = 0;
  // --pin / --forbid, resolved against the graph and these backends (steering.h): candidates it
  // refuses are dropped before pricing, and the plan records the rules.
  Steering steering;
};

struct PartitionOutcome {
  // The graph the search ran on where it is a derived copy of the caller's (an accuracy budget's
  // calibrated ranges): `index` refers to it, so the outcome keeps it alive. Null otherwise.
  std::shared_ptr<const Graph> searched_graph;
  std::unique_ptr<DataflowIndex> index;
  SearchProblem problem;             // candidates, costs, devices (problem.index = index.get())
  std::vector<std::string> backend_order;
  std::vector<std::string> limits;   // limits hit, in words: rules' during enumeration, the search's memory
  RuleStats rule_stats;              // all backends' rule statistics, merged
  EstimateStats estimate_stats;
  SearchResult search;               // the raw search answer (chosen candidates)
  Plan plan;
};

// Throws UserError for bad input: an unknown search name, a backend the cost model cannot price,
// a node no backend can take, a graph too big for exhaustive search.
PartitionOutcome partition_graph(const Graph& graph, const std::vector<BackendSpec>& backends,
                                 const CostModel& model, const PartitionOptions& options);

}  // namespace tessera
