// The tuning pipeline. See include/tessera/tune.h.
#include "tessera/tune.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <utility>

#include "tune/tune_buckets.h"
#include "runtime/budgeted_partition.h"
#include "cost_models/measure/measured_cost_model.h"
#include "search/partitioner.h"
#include "backends/compilers/backend_compiler.h"
#include "cost_models/machine.h"
#include "search/steering.h"
#include "runtime/verified_choice.h"
#include "tune/plan_verification.h"
#include "search/search_kind.h"

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
  po.steering = Steering::resolve(graph, backends, options.steering, options.model_path);

  // Search, within the accuracy budget (budgeted_partition.h; E = 0: partition_graph on fp32 backends).
  auto outcome = std::make_shared<PartitionOutcome>(partition_within_budget(graph, backends, model, po, options.budget));
  TunedPlan tuned;
  tuned.record.limits = outcome->limits;

  // The race against single:B and B+ref, then in-plan prices (plan_verification.h).
  if (model.measures() && options.verify) {
    if (options.may_measure) set_compute_threads(options.threads);
    verify_plan(graph, backends, model, po, *outcome, database, options.may_measure, options.budget, tuned.record);
  }
  if (model.measures()) outcome->plan.tuned_on = PlanMachine{options.threads, cpu_model_name(), machine_fingerprint()};
  tuned.plan = outcome->plan;
  tuned.search = std::move(outcome);
  return tuned;
}

bool bucket_searched(const ShapeBuckets& buckets, size_t b, const CostModel& model, bool anchors_only) {
  return !anchors_only || !model.measures() || buckets.anchor(b);
}

TunedBuckets tune_buckets(const std::vector<const Graph*>& graphs, const ShapeBuckets& buckets,
                          const std::vector<BackendSpec>& backends, const CostModel& model, CostDatabase* database,
                          const TuneOptions& options, bool anchors_only) {
  using Clock = std::chrono::steady_clock;
  const size_t n = buckets.buckets.size();
  TunedBuckets out;
  out.plans.resize(n);
  out.seconds.resize(n);
  out.searched.resize(n);
  std::vector<size_t> anchors;
  for (size_t b = 0; b < n; ++b) {
    out.searched[b] = bucket_searched(buckets, b, model, anchors_only);
    if (!out.searched[b]) continue;
    const auto t0 = Clock::now();
    out.plans[b] = tune_graph(*graphs[b], backends, model, database, options);
    out.seconds[b] = std::chrono::duration<double>(Clock::now() - t0).count();
    anchors.push_back(b);
  }
  for (size_t b = 0; b < n; ++b) {
    if (out.searched[b]) continue;
    const auto t0 = Clock::now();
    std::vector<PlanContender> contenders;
    std::map<std::string, size_t> anchor_of;   // by label (choose_fastest_plan drops duplicate plans)
    for (size_t a : anchors) {
      PlanContender c;
      c.label = "bucket " + std::to_string(a);
      anchor_of[c.label] = a;
      c.plan = plan_at_other_shapes(plan_to_json(out.plans[a].plan, *graphs[a]), options.model_path, *graphs[b]);
      contenders.push_back(std::move(c));
    }
    VerifyOptions vo;
    vo.may_measure = options.may_measure;
    if (options.may_measure) set_compute_threads(options.threads);
    const size_t best = choose_fastest_plan(*graphs[b], contenders, database, model, vo);
    TunedPlan& tuned = out.plans[b];
    for (size_t i = 0; i < contenders.size(); ++i)
      tuned.record.race.push_back(
          {contenders[i].label, contenders[i].latency_ms, contenders[i].measured_now, contenders[i].failed, i == best});
    tuned.plan = contenders[best].plan;
    if (contenders[best].latency_ms) tuned.plan.total_cost = Cost::value(*contenders[best].latency_ms / 1e3);
    tuned.search = out.plans[anchor_of.at(contenders[best].label)].search;   // the anchor's, for explanations
    out.seconds[b] = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return out;
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
  std::optional<SearchKind> kind = SearchKind::parse(search);
  if (kind && kind->kind == SearchKind::Kind::single &&
      std::find(names.begin(), names.end(), kind->backend) == names.end())
    names.push_back(kind->backend);
  return names;
}

std::unique_ptr<CostModel> make_tuning_cost_model(std::string_view spec, int threads) {
  return make_cost_model(spec, measure_cost_model_options(threads));
}

std::string default_cost_spec(const std::vector<BackendSpec>& backends) {
  const std::vector<std::string> real = backend_compiler_names();
  for (const BackendSpec& b : backends)
    if (!std::binary_search(real.begin(), real.end(), b.name)) return "roofline";
  return "measure";
}

}  // namespace tessera
