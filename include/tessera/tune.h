// The tuning pipeline: a model, its backends and a cost model -> the plan that ships, with the
// record of how it was chosen. One straight function, as the emit pipeline (emit_pipeline.h), and
// the one every front end calls: `tessera tune` (alone or under MPI), `tessera partition`,
// `tessera bench` per combination, and Python's tessera.tune / tessera.partition.
//
//   graph ─search─▶ plan ─measured wholes─▶ plan ─race─▶ plan ─in-plan prices─▶ plan + record
//          (collage, (coalesced functions   (against every    (its partitions and
//          within the priced as they run,    single:B and B+ref crossings as timed
//          accuracy  searched again)         plan, end to end)  inside the plan)
//          budget)
//
// Each step is a function of its own (src/search/partitioner.h, src/search/measured_wholes.h,
// verified_choice.h, in_plan_prices.h); this file only orders them. The steps after the search
// need prices that are timings of real runs (CostModel::measures()): with mock or roofline costs
// the pipeline is the search alone, and its plan is exactly partition_graph's.
//
// Why one function: a front end that rebuilds a subset of these steps returns another plan for
// the same model, backends and database (a search's plan where tune ships a single-backend one).
// With one function, the same (model, backends, cost database, options) give the byte-identical
// plan whichever front end asks, and a database that already holds every measurement and
// verdict gives it without measuring anything.
//
// Reproducible: every figure the pipeline measures (candidate prices, wholes, end-to-end race
// latencies, in-plan prices) is kept in the cost database. With `may_measure` false the race and
// the in-plan prices are only looked up; a plan whose verdicts are missing is then the search's
// plan, and its record says so (an empty race).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/backend_spec.h"
#include "tessera/cost_database.h"
#include "tessera/cost_model.h"
#include "tessera/graph.h"
#include "tessera/host_tensor.h"
#include "tessera/plan.h"

namespace tessera {

// An accuracy budget: how far a plan's outputs may stray from fp32 (TuneOptions::budget; the
// CLI's --max-rel-error), and the calibration inputs that error is verified on. The error of a
// plan is max over graph outputs of ||y - y_fp32||_2 / ||y_fp32||_2, y_fp32 being ref's fp32
// interpretation of the whole model on the same inputs and weights. max_rel_error = 0 means fp32
// plans: reduced-precision backends (onednn_bf16, onednn_int8) are left out. The method that
// finds the cheapest plan within a budget is partition_within_budget
// (src/runtime/budgeted_partition.h).
struct AccuracyBudget {
  double max_rel_error = 0.0;                      // E; 0 = fp32 plans
  std::map<std::string, HostTensor> calibration;   // input name -> data; the rest seeded random
  uint64_t seed = 0;                               // seeded inputs and missing weights
  int max_rounds = 6;                              // search + verify rounds at most (+1 fp32 fallback)
  // How an int8 variant's activation ranges come from the calibration inputs: "minmax" or
  // "percentile:<p>" (src/runtime/int8_calibration.h).
  std::string calibration_ranges = "minmax";
};

struct TuneOptions {
  std::string model_path;           // written into the plan and used in messages
  std::string search = "collage";   // collage | greedy | exhaustive | single:<backend>
  int jobs = 1;                     // threads for enumeration and costing (same plan for any number)
  int threads = 1;                  // compute threads the plan runs with, in the race and in-plan prices
  bool coalesce = true;
  size_t search_memory = 0;         // bytes the collage search may hold; 0 = its default
  AccuracyBudget budget;            // max_rel_error = 0: fp32 plans
  bool verify = true;               // race the search's plan end to end (collage, measured costs)
  bool may_measure = true;          // false: race latencies and in-plan prices only looked up
  // Steering rules (plan.h; the CLI's --pin / --forbid, src/search/steering.h): resolved against the graph and backends before anything is
  // priced; every search of the pipeline, the race's contenders included, sees only the
  // candidates they allow, and the plan records them.
  std::vector<SteeringRule> steering;
};

// One contender of the end-to-end race (verified_choice.h), as it finished.
struct RacedContender {
  std::string label;                  // "collage", "single:onednn", "onednn+ref:merged"
  std::optional<double> latency_ms;   // none: not measured, or it does not run here
  bool measured_now = false;          // false: from the cost database
  std::string failed;                 // why it does not run here
  bool chosen = false;
};

struct TuneRecord {
  std::vector<RacedContender> race;   // empty: nothing raced (or the verdicts were missing)
  bool priced_in_plan = false;        // the plan's costs are in-plan prices (isolated ones kept beside)
  std::vector<std::string> limits;    // limits the search hit, in words
  std::vector<std::string> notes;     // contenders ruled out by the accuracy budget
};

struct PartitionOutcome;   // src/search/partitioner.h: the search behind the plan

struct TunedPlan {
  Plan plan;
  TuneRecord record;
  // The search's candidates, costs and statistics, its plan replaced by the tuned one (for
  // explanations: src/search/explain.h). Refers to the graph, which must outlive it.
  std::shared_ptr<const PartitionOutcome> search;
};

// The pipeline above. `database` keeps what is measured and answers what was (may be null for
// models that measure nothing). Throws UserError for bad input: an unknown search, a backend the
// cost model cannot price, a node no backend takes, a bad accuracy budget, steering that names
// no node or an unknown backend or pins a node where it cannot go. A plan priced by measurement
// records where (Plan::tuned_on: options.threads, this machine).
TunedPlan tune_graph(const Graph& graph, const std::vector<BackendSpec>& backends, const CostModel& model,
                     CostDatabase* database, const TuneOptions& options);

// One line per raced contender ("single:onednn   1.234 ms  (measured now)  <- chosen"), then
// the in-plan line, for a person; nothing when there was no race and no in-plan price.
std::vector<std::string> describe_record(const TunedPlan& tuned);

// The backends a search may use: `names`, and for `single:B` also B when not among them.
std::vector<std::string> backends_for_search(std::vector<std::string> names, const std::string& search);

// The cost model `spec` names, as the CLI's --cost and Python's cost= spell it:
// "roofline[:DEVICE]", "mock:FILE", or "measure[:KEY=VALUE,...]" timed on this machine's real
// backends at `threads` compute threads (the threads the plan will run with).
std::unique_ptr<CostModel> make_tuning_cost_model(std::string_view spec, int threads = 1);

// The default cost model for these backends: "measure" where every one runs on this machine,
// else "roofline".
std::string default_cost_spec(const std::vector<BackendSpec>& backends);

}  // namespace tessera
