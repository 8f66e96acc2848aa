// The tuning pipeline. See include/tessera/tune.h.
#include "tessera/tune.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "runtime/budgeted_partition.h"
#include "search/partitioner.h"
#include "backends/compilers/backend_compiler.h"
#include "tune/plan_verification.h"

namespace tessera {

TunedPlan tune_graph(const Graph& graph, const std::vector<BackendSpec>& backends, const CostModel& model,
                     CostDatabase* database, const TuneOptions& options) {
  PartitionOptions po;
  po.model_path = options.model_path;
  po.search = options.search;
  po.threads = options.jobs;
  po.database = database;
  po.coalesce = options.coalesce;
  po.search_memory = options.search_memory;
  po.measure_wholes = model.measures();   // measured_wholes.h: coalesced functions priced as they run

  // Search, within the accuracy budget (budgeted_partition.h; E = 0: partition_graph on fp32 backends).
  auto outcome = std::make_shared<PartitionOutcome>(partition_within_budget(graph, backends, model, po, options.budget));
  TunedPlan tuned;
  tuned.record.limits = outcome->limits;

  // The race against single:B and B+ref, then in-plan prices (plan_verification.h).
  if (model.measures() && options.verify) {
    if (options.may_measure) set_compute_threads(options.threads);
    verify_plan(graph, backends, model, po, *outcome, database, options.may_measure, options.budget, tuned.record);
  }
  tuned.plan = outcome->plan;
  tuned.search = std::move(outcome);
  return tuned;
}

std::vector<std::string> describe_record(const TunedPlan& tuned) {
  std::vector<std::string> lines;
  for (const RacedContender& c : tuned.record.race) {
    char buf[200];
    if (c.latency_ms)
      std::snprintf(buf, sizeof buf, "%-20s %9.3f ms  (%s)%s", c.label.c_str(), *c.latency_ms,
                    c.measured_now ? "measured now" : "from the database", c.chosen ? "  <- chosen" : "");
    else
      std::snprintf(buf, sizeof buf, "%-20s %12s  (%s)", c.label.c_str(), "-",
                    c.failed.empty() ? "not measured" : "does not run here");
    lines.push_back(buf);
  }
  const Plan& plan = tuned.plan;
  if (tuned.record.priced_in_plan) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "priced in the plan: %.3f ms (its partitions and crossings as they run; %.3f ms alone)",
                  plan.total_cost.number() * 1e3, plan.isolated_total_cost->number() * 1e3);
    lines.push_back(buf);
  }
  return lines;
}

std::vector<std::string> backends_for_search(std::vector<std::string> names, const std::string& search) {
  const std::string single = "single:";
  if (search.rfind(single, 0) == 0) {
    std::string target = search.substr(single.size());
    if (std::find(names.begin(), names.end(), target) == names.end()) names.push_back(target);
  }
  return names;
}

std::string default_cost_spec(const std::vector<BackendSpec>& backends) {
  const std::vector<std::string> real = backend_compiler_names();
  for (const BackendSpec& b : backends)
    if (!std::binary_search(real.begin(), real.end(), b.name)) return "roofline";
  return "measure";
}

}  // namespace tessera
