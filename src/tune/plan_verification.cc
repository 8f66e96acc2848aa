// The verified-choice step of the tuning pipeline. See plan_verification.h.
#include "tune/plan_verification.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "ir/calibrated_ranges.h"
#include "search/sandwiches.h"
#include "tessera/error.h"
#include "runtime/in_plan_prices.h"
#include "runtime/verified_choice.h"
#include "search/search_kind.h"

namespace tessera {

namespace {

// The search's plan with its sandwiched single-node partitions covered by the backend around them
// (src/search/sandwiches.h): the cheapest such plan, found by the same search over fewer candidates.
// Under an accuracy budget a reduced-precision candidate stays only within the nodes the search's
// plan already runs in reduced precision (the caller verifies the error). None when nothing is
// sandwiched or no such plan exists.
std::optional<Plan> merged_contender(const Graph& graph, const std::vector<BackendSpec>& backends, const CostModel& model,
                                     const PartitionOptions& options, const Plan& plan,
                                     const std::function<bool(const std::string&)>& is_reduced) {
  const std::map<NodeId, std::string> sandwiched = sandwiched_nodes(graph, plan.partitions);
  if (sandwiched.empty()) return std::nullopt;
  IndexSet reduced_nodes(graph.num_nodes());
  for (const Partition& p : plan.partitions)
    if (is_reduced(p.backend)) reduced_nodes |= p.nodes;
  PartitionOptions merged = options;
  merged.allow = [&](const SearchProblem& problem) {
    std::vector<char> allowed = allow_without_sandwiches(problem, sandwiched);
    for (size_t c = 0; c < allowed.size(); ++c)
      if (is_reduced(problem.candidates[c].backend) && !problem.candidates[c].inside().is_subset_of(reduced_nodes))
        allowed[c] = 0;
    return allowed;
  };
  try {
    return partition_graph(graph, backends, model, merged).plan;
  } catch (const UserError&) {
    return std::nullopt;
  }
}

// For every backend B other than the fallbacks, the contenders `tessera partition --backends
// B,<fallbacks> --cost measure` weighs: the search over B and the fallbacks, and its merged
// variant (labels "B+ref", "B+ref:merged"). Raced here, their latencies are in the database, so
// that partition command (how a user, and bench_vs_ort.sh, builds "B with ref") finds every
// contender it knows and makes the same choice tune made among them, instead of keeping its
// search's plan undecided. squeezenet1_1: tune shipped single:onednn (Flatten inside the oneDNN
// function), the `ref,onednn` partition kept Flatten on ref, and two plans 1% apart were timed
// against each other as "tuned against best single". Nothing when B is the run's only backend
// besides the fallbacks (the search's own plan is that pair's plan).
std::vector<PlanContender> pair_contenders(const Graph& graph, const std::vector<BackendSpec>& offered,
                                           const CostModel& model, const PartitionOptions& options,
                                           const std::function<bool(const std::string&)>& is_reduced) {
  size_t fallbacks = 0;
  std::string fallback_names;
  for (const BackendSpec& b : offered)
    if (b.all_ops) {
      ++fallbacks;
      fallback_names += "+" + b.name;
    }
  std::vector<PlanContender> pairs;
  if (fallbacks == 0 || offered.size() <= fallbacks + 1) return pairs;
  for (const BackendSpec& b : offered) {
    if (b.all_ops) continue;
    std::vector<BackendSpec> pair;   // in the run's order, as `--backends` would list them
    for (const BackendSpec& x : offered)
      if (x.all_ops || x.name == b.name) pair.push_back(x);
    PartitionOptions po = options;
    po.search = "collage";
    po.allow = nullptr;
    const std::string label = b.name + fallback_names;
    try {
      Plan plan = partition_graph(graph, pair, model, po).plan;
      std::optional<Plan> merged = merged_contender(graph, pair, model, po, plan, is_reduced);
      pairs.push_back(PlanContender{.label = label, .plan = std::move(plan)});
      if (merged) pairs.push_back(PlanContender{.label = label + ":merged", .plan = std::move(*merged)});
    } catch (const UserError&) {
      continue;   // no plan over that pair: nothing for the partition command to weigh either
    }
  }
  return pairs;
}

// A contender other than the search's plan won the race: what stays fp32 in it, and why. The
// search's own reasons for the nodes it kept fp32, and for each node the search's plan ran in int8
// but the winner runs in fp32 (a convolution or matmul with a ranged source, as the search lists
// them), that int8 lost the end-to-end race (by its tie margin, maybe). Nodes the winner runs in
// reduced precision (int8, bf16) are not fp32 and are not listed.
std::vector<std::pair<std::string, std::string>> stayed_fp32_after_race(const Graph& searched, const std::vector<BackendSpec>& backends,
                                                                        const PlanContender& search, const PlanContender& winner,
                                                                        double tie_margin) {
  auto nodes_on = [&](const Plan& plan, const std::vector<std::string>& on_backends) {
    std::vector<char> on(searched.nodes.size(), 0);
    for (const Partition& p : plan.partitions)
      if (std::find(on_backends.begin(), on_backends.end(), p.backend) != on_backends.end())
        p.nodes.for_each([&](int n) { on[static_cast<size_t>(n)] = 1; });
    return on;
  };
  const std::vector<char> was = nodes_on(search.plan, int8_backends(backends)),
                          is = nodes_on(winner.plan, reduced_precision_backends(backends));
  std::map<std::string, std::string> why(search.plan.accuracy->stayed_fp32.begin(), search.plan.accuracy->stayed_fp32.end());
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t n = 0; n < searched.nodes.size(); ++n) {
    const std::string& name = searched.nodes[n].name;
    if (is[n]) continue;
    const Node& node = searched.nodes[n];
    const bool anchor = (node.op == "Conv" || node.op == "MatMul" || node.op == "Gemm") && !node.inputs.empty() &&
                        node.inputs[0] != kNoValue && searched.value(node.inputs[0]).range;
    if (was[n] && anchor) {   // the convolutions and matmuls, as the search lists them; not their ReLUs and Adds
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "lost the end-to-end race: the plan running it in int8 measured %.3g ms, %s (fp32 here) %.3g ms "
                    "(a mixed plan must be %g%% faster than a single-backend one)",
                    search.latency_ms.value_or(0.0), winner.label.c_str(), winner.latency_ms.value_or(0.0), 100.0 * tie_margin);
      out.push_back({name, buf});
    } else if (auto it = why.find(name); it != why.end()) {
      out.push_back({name, it->second});
    }
  }
  return out;
}


void choose_verified(const Graph& graph, const std::vector<BackendSpec>& backends, const CostModel& model,
                     const PartitionOptions& options, PartitionOutcome& outcome, CostDatabase* database,
                     bool may_measure, const AccuracyBudget& budget, TuneRecord& record) {
  const double E = budget.max_rel_error;
  const std::vector<std::string> reduced = reduced_precision_backends(backends);
  auto is_reduced = [&](const std::string& name) { return std::find(reduced.begin(), reduced.end(), name) != reduced.end(); };
  // Under E = 0 the plans are fp32: reduced backends are not offered to the single plans either.
  std::vector<BackendSpec> offered;
  for (const BackendSpec& b : backends)
    if (E > 0 || !is_reduced(b.name)) offered.push_back(b);
  std::unique_ptr<PlanErrorCheck> check;
  if (E > 0) check = std::make_unique<PlanErrorCheck>(graph, budget);
  const std::string calibration = E > 0 ? calibration_fingerprint(graph, budget) : "";

  // An int8 plan's contenders are made on the graph it was searched on (with its calibrated
  // ranges: an int8 variant's functions need them) and carry the same ranges.
  const std::optional<PlanQuantization>& quantization = outcome.plan.quantization;
  const Graph ranged = quantization ? with_calibrated_ranges(graph, *quantization) : Graph();
  const Graph& searched = quantization ? ranged : graph;

  std::vector<PlanContender> contenders;
  contenders.push_back(PlanContender{.label = options.search, .plan = outcome.plan});
  // Under a budget a contender must hold it end to end, and then carries its verified error.
  auto offer = [&](const std::string& label, Plan plan, bool single_backend) {
    if (quantization) {
      plan.quantization = quantization;
      plan.model_fingerprint = outcome.plan.model_fingerprint;
    }
    if (check) {
      const std::vector<double> samples = check->sample_errors(plan);
      const double err = sample_bound(samples);
      const double target = verification_target(E, quantization.has_value());
      if (err > target) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%s is not a contender: end-to-end relative error %.3g > %s %g", label.c_str(), err,
                      quantization ? "(1 - kInt8Margin) max_rel_error" : "max_rel_error", target);
        record.notes.push_back(buf);
        return;
      }
      plan.accuracy = verified_accuracy(E, calibration, samples, 0.0, 0);
    }
    contenders.push_back(PlanContender{.label = label, .plan = std::move(plan), .single_backend = single_backend});
  };
  if (std::optional<Plan> merged = merged_contender(searched, offered, model, options, outcome.plan, is_reduced))
    offer(options.search + ":merged", std::move(*merged), false);
  for (PlanContender& pair : pair_contenders(searched, offered, model, options, is_reduced))
    offer(pair.label, std::move(pair.plan), false);
  for (const BackendSpec& b : offered) {
    if (b.all_ops) continue;   // a fallback (ref): every single-backend plan already leans on it
    PartitionOptions single = options;
    single.search = SearchKind::single_backend(b.name).name();
    single.allow = nullptr;
    Plan plan;
    try {
      plan = partition_graph(searched, offered, model, single).plan;
    } catch (const UserError& e) {
      // No plan with that backend (e.g. it covers nothing the fallback cannot), or none that obeys
      // --pin / --forbid: not a contender. Under steering the user asked for it, so say so.
      if (!options.steering.empty()) record.notes.push_back(single.search + " is not a contender under the steering rules (pin, forbid): " + e.what());
      continue;
    }
    offer(single.search, std::move(plan), true);   // its fallback is fp32: only its reduced partitions can break the budget
  }
  VerifyOptions vo;
  vo.may_measure = may_measure;
  size_t best = choose_fastest_plan(graph, contenders, database, model, vo);
  if (contenders.size() < 2) return;
  // Undecided (some contender neither measured nor known not to run): the search's plan, untouched.
  for (const PlanContender& c : contenders)
    if (!c.latency_ms && c.failed.empty()) return;
  for (size_t i = 0; i < contenders.size(); ++i) {
    const PlanContender& c = contenders[i];
    record.race.push_back(RacedContender{c.label, c.latency_ms, c.measured_now, c.failed, i == best});
  }
  Plan chosen = contenders[best].plan;
  // The search's own reasons carry over to the winner: why int8 stayed out (also when the search
  // fell back to fp32, its plan then carrying no ranges), and the fallback where the winner has no
  // reduced-precision partition either.
  const std::optional<PlanAccuracy>& searched_accuracy = contenders[0].plan.accuracy;
  if (best != 0 && chosen.accuracy && searched_accuracy) {
    if (quantization || !searched_accuracy->stayed_fp32.empty())
      chosen.accuracy->stayed_fp32 = stayed_fp32_after_race(searched, offered, contenders[0], contenders[best], vo.tie_margin);
    if (std::none_of(chosen.partitions.begin(), chosen.partitions.end(), [&](const Partition& p) { return is_reduced(p.backend); }))
      chosen.accuracy->fallback = searched_accuracy->fallback;
  }
  chosen.verified_choice = contenders[best].label;
  for (const PlanContender& c : contenders)
    if (c.latency_ms) chosen.verified_ms.emplace_back(c.label, *c.latency_ms);
  outcome.plan = std::move(chosen);
}

}  // namespace

void verify_plan(const Graph& graph, const std::vector<BackendSpec>& backends, const CostModel& model,
                 const PartitionOptions& options, PartitionOutcome& outcome, CostDatabase* database, bool may_measure,
                 const AccuracyBudget& budget, TuneRecord& record) {
  if (SearchKind::parse_or_throw(options.search).kind != SearchKind::Kind::collage) return;
  choose_verified(graph, backends, model, options, outcome, database, may_measure, budget, record);
  InPlanOptions in_plan;
  in_plan.may_measure = may_measure;
  for (const auto& [label, ms] : outcome.plan.verified_ms)   // the chosen plan's latency in the race
    if (label == outcome.plan.verified_choice) in_plan.end_to_end_ms = ms;
  record.priced_in_plan = price_in_plan(graph, outcome.plan, database, model, in_plan) &&
                          outcome.plan.total_cost.is_value() && outcome.plan.isolated_total_cost->is_value();
}

}  // namespace tessera
