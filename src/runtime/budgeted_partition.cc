// Search, verify, tighten: partition_within_budget (src/runtime/budgeted_partition.h).
#include "runtime/budgeted_partition.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <memory>
#include <optional>
#include <map>
#include <set>

#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "search/accuracy_budget.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/error.h"
#include "runtime/calibration_samples.h"
#include "runtime/executor.h"
#include "runtime/int8_bias_correction.h"
#include "runtime/int8_calibration.h"
#include "runtime/model_data.h"
#include "ir/structural_hash.h"
#include "search/search_kind.h"

namespace tessera {

struct PlanErrorCheck::Data {
  Graph model;                                    // with seeded weights
  std::vector<std::vector<HostTensor>> inputs;    // per sample
  std::vector<HostTensor> values;                 // sample 0: ref's fp32 value of every ValueId
  std::vector<std::vector<HostTensor>> sources;   // samples 1..K-1: the int8 sources' values (others empty)
  std::vector<std::vector<HostTensor>> expected;  // per sample: ref's fp32 outputs, per graph output
};

PlanErrorCheck::PlanErrorCheck(const Graph& graph, const AccuracyBudget& budget)
    : graph_(graph), seed_(budget.seed), data_(std::make_unique<Data>()) {
  data_->model = with_seeded_weights(graph, budget.seed);   // what Executor runs
  const Graph& model = data_->model;
  const std::vector<ValueId> int8_values = int8_sources(model);
  const auto samples = calibration_samples(graph, budget.calibration, budget.seed);
  for (size_t k = 0; k < samples.size(); ++k) {
    data_->inputs.push_back(model_inputs(graph, budget.seed + k, samples[k]));
    std::map<ValueId, HostTensor> bindings;
    for (size_t i = 0; i < model.inputs.size(); ++i) bindings[model.inputs[i]] = data_->inputs.back()[i];
    std::vector<HostTensor> values = interpret(model, make_ref_kernels(), bindings);
    data_->expected.emplace_back();
    for (ValueId v : model.outputs) data_->expected.back().push_back(values[static_cast<size_t>(v)]);
    if (k == 0) {
      data_->values = std::move(values);
      continue;
    }
    std::vector<HostTensor> kept(values.size());
    for (ValueId v : int8_values) kept[static_cast<size_t>(v)] = std::move(values[static_cast<size_t>(v)]);
    data_->sources.push_back(std::move(kept));
  }
}

PlanErrorCheck::~PlanErrorCheck() = default;

const Graph& PlanErrorCheck::model() const { return data_->model; }
const std::vector<HostTensor>& PlanErrorCheck::values() const { return data_->values; }
size_t PlanErrorCheck::samples() const { return data_->inputs.size(); }

PlanQuantization PlanErrorCheck::ranges(const std::string& method) const {
  PlanQuantization out = calibrate_ranges(data_->model, data_->values, method);
  for (const std::vector<HostTensor>& sample : data_->sources) {
    std::map<std::string, std::pair<float, float>> more;
    for (const auto& [name, r] : calibrate_ranges(data_->model, sample, method).ranges) more.emplace(name, r);
    std::vector<std::pair<std::string, std::pair<float, float>>> merged;
    for (const auto& [name, r] : out.ranges)   // a value non-finite in some sample has no range
      if (auto it = more.find(name); it != more.end())
        merged.push_back({name, {std::min(r.first, it->second.first), std::max(r.second, it->second.second)}});
    out.ranges = std::move(merged);
  }
  return out;
}

// One compute thread, so that the number in the plan does not depend on the machine's thread count.
std::vector<double> PlanErrorCheck::sample_errors(const Plan& plan) const {
  const ScopedComputeThreads one_thread(1);
  ExecutorOptions options;
  options.seed = seed_;
  Executor executor(graph_, plan, options);
  std::vector<double> out;
  for (size_t k = 0; k < data_->inputs.size(); ++k) {
    const std::vector<HostTensor>& actual = executor.run(data_->inputs[k]);
    double worst = 0.0;
    for (size_t i = 0; i < actual.size(); ++i) worst = std::max(worst, relative_l2_error(actual[i], data_->expected[k][i]));
    out.push_back(worst);
  }
  return out;
}

double PlanErrorCheck::error(const Plan& plan) const { return sample_bound(sample_errors(plan)); }

std::string sample_bound_rule(size_t samples) {
  if (samples < 2) return "largest";
  char buf[64];
  std::snprintf(buf, sizeof buf, "max(largest, mean + %g sd)", kSampleSpread);
  return buf;
}

PlanAccuracy verified_accuracy(double max_rel_error, const std::string& calibration, const std::vector<double>& sample_errors,
                               double proxy, int64_t rounds) {
  PlanAccuracy a{max_rel_error, calibration, sample_bound(sample_errors), proxy, rounds};
  a.samples = static_cast<int64_t>(sample_errors.size());
  a.sample_errors = sample_errors;
  a.bound = sample_bound_rule(sample_errors.size());
  return a;
}

double sample_bound(const std::vector<double>& errors) {
  double worst = 0.0, sum = 0.0;
  for (double e : errors) {
    if (!std::isfinite(e)) return e;
    worst = std::max(worst, e);
    sum += e;
  }
  if (errors.size() < 2) return worst;
  const double n = static_cast<double>(errors.size()), mean = sum / n;
  double ss = 0.0;
  for (double e : errors) ss += (e - mean) * (e - mean);
  return std::max(worst, mean + kSampleSpread * std::sqrt(ss / (n - 1.0)));
}

std::vector<std::string> reduced_precision_backends(const std::vector<BackendSpec>& backends) {
  std::vector<std::string> out;
  const std::vector<std::string> real = backend_compiler_names();
  for (const BackendSpec& b : backends)
    if (std::binary_search(real.begin(), real.end(), b.name) && make_backend_compiler(b.name)->precision() != "f32")
      out.push_back(b.name);
  return out;
}

std::string calibration_fingerprint(const Graph& graph, const AccuracyBudget& budget) {
  const std::string seeded = "seeded:" + std::to_string(budget.seed);
  if (budget.calibration.empty()) return seeded;
  uint64_t h = fnv1a64("tessera.calibration/1");
  for (const auto& [name, t] : budget.calibration) {   // std::map: name order
    h = fnv1a64(name, h);
    h = fnv1a64(to_string(t.type), h);
    h = fnv1a64(std::string_view(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size()), h);
  }
  std::string fp = "npy:" + hash_hex(h);
  if (budget.calibration.size() < graph.inputs.size()) fp += "," + seeded;
  return fp;
}

double verification_target(double max_rel_error, bool int8_offered) {
  return int8_offered ? max_rel_error * (1.0 - kInt8Margin) : max_rel_error;
}

std::vector<std::string> int8_backends(const std::vector<BackendSpec>& backends) {
  std::vector<std::string> out;
  for (const std::string& b : reduced_precision_backends(backends))
    if (make_backend_compiler(b)->precision() == "int8") out.push_back(b);
  return out;
}

Graph budget_search_graph(const Graph& graph, const std::vector<BackendSpec>& backends, const AccuracyBudget& budget) {
  if (!(budget.max_rel_error > 0) || int8_backends(backends).empty()) return graph;
  const PlanErrorCheck check(graph, budget);
  const std::string backend = int8_backends(backends).front();
  return with_calibrated_ranges(graph, with_int8_bias_shifts(check.ranges(budget.calibration_ranges), graph, check.values(), backend));
}

namespace {

// Per node, the failing round (error > target) that ran it in int8 with the least error: the
// closest int8 came to holding the budget there.
struct FailedInt8 {
  std::vector<double> error;   // +inf: no failing round ran the node in int8
  std::vector<int> round;      // 1-based
  double target = 0.0;
};

// The convolutions and matmuls an int8 variant could quantize (their source has a range) that
// `plan` runs in fp32, each with why (PlanAccuracy::stayed_fp32); one on a bf16 variant is not
// fp32, and is not listed.
// `int8_faster[n]`: some int8 candidate holding n is priced below the cheapest fp32 candidate of
// the same nodes; where none is, int8 was not faster there, whatever the budget.
std::vector<std::pair<std::string, std::string>> stayed_fp32(const Graph& ranged, const Plan& plan, const std::set<std::string>& reduced,
                                                             const std::vector<double>& least_error, const std::vector<char>& int8_faster,
                                                             const FailedInt8& failed, double E) {
  std::vector<std::string> backend_of(ranged.nodes.size());
  for (const Partition& p : plan.partitions) p.nodes.for_each([&](NodeId n) { backend_of[static_cast<size_t>(n)] = p.backend; });
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t n = 0; n < ranged.nodes.size(); ++n) {
    const Node& node = ranged.nodes[n];
    if (node.op != "Conv" && node.op != "MatMul" && node.op != "Gemm") continue;
    if (node.inputs.empty() || node.inputs[0] == kNoValue || !ranged.value(node.inputs[0]).range || reduced.count(backend_of[n])) continue;
    char why[200];
    if (std::isinf(least_error[n]))
      std::snprintf(why, sizeof why, "no int8 candidate runs it (oneDNN has no int8 kernel for it, or its weights are computed)");
    else if (least_error[n] > E)
      std::snprintf(why, sizeof why, "its int8 candidates' least error %.3g exceeds the budget %g", least_error[n], E);
    else if (std::isfinite(failed.error[n]))
      std::snprintf(why, sizeof why, "failed verification: round %d's plan ran it in int8 and verified at %.3g > target %.3g (its own int8 error %.3g at least)",
                    failed.round[n], failed.error[n], failed.target, least_error[n]);
    else if (!int8_faster[n])
      std::snprintf(why, sizeof why, "not faster: no int8 candidate holding it is priced below fp32 on the same nodes (int8 error %.3g at least)",
                    least_error[n]);
    else
      std::snprintf(why, sizeof why, "over the budget beside the int8 partitions chosen: its int8 error (%.3g at least) did not fit",
                    least_error[n]);
    out.push_back({node.name, why});
  }
  return out;
}

}  // namespace

double budget_growth(double target, double error) {
  const double room = 0.9 * target / std::max(error, 1e-12);
  return room <= 1.0 ? 1.0 : std::clamp(room * room, 1.5, 8.0);
}

PartitionOutcome partition_within_budget(const Graph& graph, const std::vector<BackendSpec>& backends,
                                         const CostModel& model, const PartitionOptions& options,
                                         const AccuracyBudget& budget) {
  const double E = budget.max_rel_error;
  if (!std::isfinite(E) || E < 0) throw UserError::option("max_rel_error", "", "must be a finite number >= 0");
  const std::vector<std::string> reduced_names = reduced_precision_backends(backends);
  if (E == 0) {   // fp32 plans exactly: the reduced backends are not offered at all
    std::vector<BackendSpec> fp32;
    for (const BackendSpec& b : backends)
      if (std::find(reduced_names.begin(), reduced_names.end(), b.name) == reduced_names.end()) fp32.push_back(b);
    if (fp32.empty())
      throw UserError::option("backends", "", "only reduced-precision backends; with max_rel_error 0 a plan needs an fp32 one");
    return partition_graph(graph, fp32, model, options);
  }
  if (SearchKind::parse_or_throw(options.search).kind != SearchKind::Kind::collage)
    throw UserError::option("search", options.search, "an accuracy budget (max_rel_error) needs the collage search");
  const std::vector<std::string> real = backend_compiler_names();
  for (const BackendSpec& b : backends)
    if (!std::binary_search(real.begin(), real.end(), b.name))
      throw UserError::option("backends", b.name, "cannot run here, and an accuracy budget verifies plans by running them");

  const std::set<std::string> reduced(reduced_names.begin(), reduced_names.end());
  const std::vector<std::string> int8_names = int8_backends(backends);
  const std::set<std::string> int8(int8_names.begin(), int8_names.end());
  const PlanErrorCheck check(graph, budget);
  // int8 variants: calibrated ranges on the graph the search sees (int8_calibration.h).
  std::optional<PlanQuantization> quantization;
  std::shared_ptr<const Graph> ranged;   // shared with every round's outcome (its index refers to it)
  if (!int8.empty()) {
    if (budget.calibration.size() < graph.inputs.size())
      std::fprintf(stderr, "warning: int8 activation ranges from seeded random inputs; real calibration inputs give truer scales\n");
    if (check.samples() == 1)
      std::fprintf(stderr, "warning: one calibration sample: its int8 error is one noisy draw; stack several along axis 0 so that the budget's verification sees their spread\n");
    // One shift per anchor, from the first int8 backend (int8_bias_correction.h).
    quantization = with_int8_bias_shifts(check.ranges(budget.calibration_ranges), graph, check.values(), int8_names.front());
    ranged = std::make_shared<const Graph>(with_calibrated_ranges(graph, *quantization));
  }
  const Graph& searched = ranged ? *ranged : graph;
  // int8: the proxy adds the candidates' end-to-end errors in quadrature (see the header).
  const bool quadrature = quantization.has_value();
  std::optional<Int8CandidateErrors> int8_errors;
  if (quantization) int8_errors.emplace(searched, check.values());
  // Per node: the least error of an int8 candidate holding it that has a price (+inf: none).
  std::vector<double> least_int8_error(graph.nodes.size(), INFINITY);
  std::vector<char> int8_faster(graph.nodes.size(), 0);   // stayed_fp32's "not faster" (above)
  CostDatabase in_memory;   // later rounds reuse the first round's costs even without --cache
  PartitionOptions po = options;
  if (!po.database) po.database = &in_memory;

  // One round: search under proxy budget B, then verify.
  struct Round {
    PartitionOutcome outcome;
    std::vector<double> samples;   // the plan's error per calibration sample
    double proxy = 0.0, error = 0.0, budget = 0.0;
  };
  auto round_at = [&](double B) {
    std::vector<double> error;
    po.allow = [&](const SearchProblem& problem) {
      error.assign(problem.candidates.size(), -1.0);
      for (size_t i = 0; i < problem.candidates.size(); ++i) {
        if (!reduced.count(problem.candidates[i].backend)) continue;
        if (int8.count(problem.candidates[i].backend)) {   // on the calibration data, where it has a price
          if (!problem.costs[i].is_value()) {
            error[i] = budget_prior_error(problem, static_cast<int>(i));
            continue;
          }
          error[i] = int8_errors->end_to_end_error(problem, static_cast<int>(i));
          for (int n : problem.candidates[i].inside().members())
            least_int8_error[static_cast<size_t>(n)] = std::min(least_int8_error[static_cast<size_t>(n)], error[i]);
          continue;
        }
        const auto& measured = i < problem.errors.size() ? problem.errors[i] : std::nullopt;
        error[i] = measured ? *measured : budget_prior_error(problem, static_cast<int>(i));
      }
      // Per node set, the cheapest fp32 and int8 prices: where int8 is cheaper, its nodes could gain.
      std::map<std::vector<int>, std::pair<double, double>> price;   // (fp32, int8)
      for (size_t i = 0; i < problem.candidates.size(); ++i) {
        if (!problem.costs[i].is_value() || (reduced.count(problem.candidates[i].backend) && !int8.count(problem.candidates[i].backend)))
          continue;
        auto [it, fresh] = price.try_emplace(problem.candidates[i].inside().members(), INFINITY, INFINITY);
        double& p = int8.count(problem.candidates[i].backend) ? it->second.second : it->second.first;
        p = std::min(p, problem.costs[i].seconds());
      }
      for (const auto& [nodes, p] : price)
        if (p.second < p.first)
          for (int n : nodes) int8_faster[static_cast<size_t>(n)] = 1;
      if (!quadrature) return choose_within_budget(problem, error, B).allowed;
      std::vector<double> squared(error);
      for (double& e : squared)
        if (e > 0) e *= e;
      return choose_within_budget(problem, squared, B * B).allowed;
    };
    Round r{partition_graph(searched, backends, model, po), {}, 0.0, 0.0, B};
    r.outcome.searched_graph = ranged;
    for (int c : r.outcome.search.chosen) {
      const double e = error[static_cast<size_t>(c)];
      if (e >= 0) r.proxy += quadrature ? e * e : e;
    }
    if (quadrature) r.proxy = std::sqrt(r.proxy);
    r.outcome.plan.quantization = quantization;
    r.outcome.plan.model_fingerprint = model_fingerprint(graph);   // the model as imported, not its ranged copy
    r.samples = check.sample_errors(r.outcome.plan);
    r.error = sample_bound(r.samples);
    return r;
  };

  // Tighten while the plan fails, loosen while it holds with room to spare; keep the cheapest
  // verified plan. `fail` is the smallest proxy budget whose plan failed.
  std::optional<Round> best;
  const double target = verification_target(E, !int8.empty());
  double B = E, fail = INFINITY;
  int rounds = 0;
  FailedInt8 failed{std::vector<double>(graph.nodes.size(), INFINITY), std::vector<int>(graph.nodes.size(), 0), target};
  double least_failed = INFINITY;   // the least error of a round that failed
  while (rounds < budget.max_rounds) {
    Round r = round_at(B);
    ++rounds;
    if (r.error > target) {
      least_failed = std::min(least_failed, r.error);
      for (const Partition& p : r.outcome.plan.partitions)
        if (int8.count(p.backend))
          p.nodes.for_each([&](NodeId n) {
            if (r.error < failed.error[static_cast<size_t>(n)]) {
              failed.error[static_cast<size_t>(n)] = r.error;
              failed.round[static_cast<size_t>(n)] = rounds;
            }
          });
    }
    double next;
    if (r.error <= target) {
      const bool same_as_best = best && best->outcome.search.chosen == r.outcome.search.chosen;
      if (!best || r.outcome.plan.total_cost < best->outcome.plan.total_cost) best = std::move(r);
      if (same_as_best) break;   // more budget bought nothing
      const double growth = budget_growth(target, best->error);
      next = B * (quadrature ? std::sqrt(growth) : growth);   // a quadrature proxy grows like the error itself
      if (next >= fail) next = std::sqrt(B * fail);
      if (next <= B * 1.05) break;
    } else {
      if (r.proxy == 0.0) break;   // no reduced candidate left: tightening cannot help
      fail = std::min(fail, B);
      next = best ? std::sqrt(best->budget * fail) : r.proxy * std::min(0.5, 0.9 * target / r.error);
      if (best && fail <= best->budget * 1.05) break;
    }
    B = next;
  }
  std::string fallback;
  if (!best) {   // nothing held: the fp32 plan, from the fp32 backends alone (no reduced candidate at all)
    std::vector<BackendSpec> fp32;
    for (const BackendSpec& b : backends)
      if (!reduced.count(b.name)) fp32.push_back(b);
    if (fp32.empty())
      throw UserError::option("max_rel_error", format_plan_number(E),
                      "no plan of the reduced-precision backends meets it and the backends have no fp32 one to fall back on");
    PartitionOptions fo = po;
    fo.allow = nullptr;
    Round r{partition_graph(graph, fp32, model, fo), {}, 0.0, 0.0, 0.0};
    r.samples = check.sample_errors(r.outcome.plan);
    r.error = sample_bound(r.samples);
    best = std::move(r);
    char why[200];
    std::snprintf(why, sizeof why, "every round's plan failed verification: %d round%s, the least error %.3g > target %.3g; "
                  "the plan of the fp32 backends alone", rounds, rounds == 1 ? "" : "s", least_failed, target);
    fallback = why;
    ++rounds;
  }
  best->outcome.plan.accuracy = verified_accuracy(E, calibration_fingerprint(graph, budget), best->samples, best->proxy, rounds);
  best->outcome.plan.accuracy->fallback = fallback;
  if (quantization)
    best->outcome.plan.accuracy->stayed_fp32 = stayed_fp32(searched, best->outcome.plan, reduced, least_int8_error, int8_faster, failed, E);
  return std::move(best->outcome);
}

}  // namespace tessera
