// partition_within_budget: the cheapest plan found whose end-to-end relative error against fp32
// stays within a budget E, verified on calibration inputs (--max-rel-error E).
//
// Terms. A *reduced* backend computes in lower precision than fp32 (BackendCompiler::precision()
// != "f32": onednn_bf16, onednn_int8). The error of a plan is max over graph outputs of
// ||y - y_fp32||_2 / ||y_fp32||_2, y_fp32 being ref's fp32 interpretation of the whole model on the
// same inputs and weights, over the calibration samples their largest, raised by their spread
// (sample_bound below). Calibration inputs: --calibration
// NAME=FILE.npy where given (a file may stack K samples along axis 0: calibration_samples.h),
// seeded random (model_data.h, `seed`; kSeededSamples samples) otherwise, with the model's weights (seeded where it has none).
//
// Method (search, then verify; tighten or loosen):
//   round(B): partition_graph with CollageOptions::allowed from choose_within_budget(problem, e, B)
//             (src/search/accuracy_budget.h: Lagrangian on the proxy sum of candidate errors e_i <= B)
//          -> run the plan on the calibration inputs (Executor, 1 compute thread) -> error err
//   B = E first. A plan with err > E: B shrinks (below its proxy: proxy * min(1/2, 0.9 E / err),
//   or halfway, geometrically, to the last B that held). A plan with err <= E is kept if it is the
//   cheapest verified so far, and B grows by (0.9 E / err)^2 (budget_growth: at least 1.5x while
//   there is room, at most 8x, at most halfway to the smallest B that failed): the sum proxy is
//   conservative (independent roundings add roughly in quadrature, so the error grows like the
//   square root of the budget, and later layers often damp them: resnet18's 20 int8 convolutions
//   sum to a proxy of 0.16 and read 0.013 end to end), so the first verified plan usually leaves
//   most of the budget unused. Stops after `max_rounds`, when more budget buys the same plan, when the two ends
//   meet within 5%, or when a failing plan has no reduced candidate left.
//   Nothing verified: the plan of the fp32 backends alone (no reduced-precision partition at all),
//   and PlanAccuracy::fallback says so (rounds, least error, target).
//
// What stayed fp32 (int8 offered: PlanAccuracy::stayed_fp32), per convolution or matmul int8 could
// quantize, the first reason that applies: no int8 candidate runs it; its int8 candidates' least
// error exceeds E; failed verification (a round's plan ran it in int8 and verified over the
// target: the failing round with the least error is named, with that error); not faster; over the
// budget beside the int8 partitions chosen.
//
// int8 variants: the proxy is the quadrature sum sqrt(sum e_i^2) of the candidates' end-to-end
// errors (int8_calibration.h: each anchor's error at the model's output; measured on resnet18
// they add that way: sqrt of the sum of squares 0.015, the whole model in int8 0.013), so the
// Lagrangian runs on e_i^2 against B^2, and B grows by the square root of budget_growth.
//
// int8 variants (precision "int8": onednn_int8) need activation ranges: when one is offered, the
// ranges come from ref's values on the calibration inputs (src/runtime/int8_calibration.h; a
// warning when those inputs are seeded random: real data gives truer scales), the search runs on
// the graph carrying them (Value::range, so the cost database keys on them through the functions'
// hashes), each int8 candidate's error is measured on the calibration data instead of random
// inputs, and the plan records the ranges (Plan::quantization) for whoever runs it.
//
// Guarantee: the plan's verified error on the calibration inputs is <= E, <= 0.8 E when an int8
// variant is offered (verification_target; recorded in
// Plan::accuracy), unless it is the fp32 fallback (then it is fp32's own rounding difference
// from ref, ~1e-6, reported as it is). On other inputs it is a measurement, not a bound: held-out
// inputs should be checked (`tessera run --check --input ...` prints the relative error).
// Cost: per round one partition_graph (costs come from the cost database after the first, so a
// round is enumeration + a few tens of searches) and one compile + run of the plan; one ref
// interpretation of the model in all.
//
// E = 0 (the default): reduced backends are dropped from the backend list before partition_graph,
// so the plan is exactly the fp32 plan of the other backends; nothing is run, nothing recorded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "search/partitioner.h"
#include "tessera/tune.h"
#include "tessera/host_tensor.h"
#include "tessera/plan.h"

namespace tessera {

// The backends whose compiler computes below fp32 (onednn_bf16), in `backends` order.
std::vector<std::string> reduced_precision_backends(const std::vector<BackendSpec>& backends);

// "seeded:<seed>" when nothing is given, else "npy:<hash of names and bytes>" (+ ",seeded:<seed>"
// when some inputs are still seeded random).
std::string calibration_fingerprint(const Graph& graph, const AccuracyBudget& budget);

// The end-to-end relative error of plans on the budget's calibration inputs: ref's fp32 outputs
// are computed once (construction), each error() compiles and runs one plan (1 compute thread).
// Used by every round of partition_within_budget and by end-to-end verification (the tuning
// pipeline's verify_plan, src/tune/plan_verification.h), so that no contender that breaks the
// budget can be returned.
class PlanErrorCheck {
 public:
  PlanErrorCheck(const Graph& graph, const AccuracyBudget& budget);
  ~PlanErrorCheck();
  PlanErrorCheck(const PlanErrorCheck&) = delete;
  PlanErrorCheck& operator=(const PlanErrorCheck&) = delete;
  // Per calibration sample (calibration_samples.h): max over graph outputs of
  // ||y - y_fp32||_2 / ||y_fp32||_2.
  std::vector<double> sample_errors(const Plan& plan) const;
  // The verified error: sample_bound of sample_errors.
  double error(const Plan& plan) const;
  // The model ref ran (seeded weights filled in) and every one of its values on the first sample,
  // by ValueId (what int8 candidates' errors are measured on: int8_calibration.h).
  const Graph& model() const;
  const std::vector<HostTensor>& values() const;
  size_t samples() const;
  // The int8 sources' ranges (calibrate_ranges with `method`) over every sample: per value the
  // lowest min and highest max of the samples' ranges (for minmax, exactly the range over all).
  PlanQuantization ranges(const std::string& method) const;

 private:
  struct Data;
  const Graph& graph_;
  uint64_t seed_;
  std::unique_ptr<Data> data_;
};

// The error a plan is verified at, from its errors on K calibration samples: the largest, and
// with K >= 2 at least mean + kSampleSpread * sd (sd the samples' standard deviation, n - 1).
// One sample is one draw of a noisy quantity: int8's error moves with where values fall against
// rounding steps (efficientnet_b0 with random weights at E = 0.01, one plan: 0.0073, 0.0090 and
// 0.0107 on three standard-normal inputs). The largest of four draws sits about one sd above their
// mean; a held-out input lands above mean + 2 sd about once in forty, and the margin below
// (kInt8Margin) takes the rest. One sample has no spread to measure: the largest alone.
inline constexpr double kSampleSpread = 2.0;
double sample_bound(const std::vector<double>& errors);

// How sample_bound makes the verified error of `samples` errors, as a plan records it
// (PlanAccuracy::bound): "largest" for one, "max(largest, mean + 2 sd)" for several.
std::string sample_bound_rule(size_t samples);

// The accuracy record of a plan verified at `sample_errors` (one per calibration sample, as
// PlanErrorCheck::sample_errors gives them): verified_error is their sample_bound, and the record
// says on how many samples, each one's error and the rule (PlanAccuracy::samples, sample_errors, bound).
PlanAccuracy verified_accuracy(double max_rel_error, const std::string& calibration, const std::vector<double>& sample_errors,
                               double proxy, int64_t rounds);

// What a plan's verified error must stay within: E, or (1 - kInt8Margin) E when an int8 variant
// is offered. int8's ranges and bias shifts (int8_bias_correction.h) are fit to the calibration
// inputs, so other inputs may fall outside the ranges and saturate, and the shifts remove part of
// the calibration inputs' own error: on held-out data an int8 plan's error runs above the
// verified one (bias-corrected, one calibration sample: resnet18 at E = 0.01 0.0064 verified,
// 0.0082 held out; mnasnet1_0 0.0090 and 0.0106 at a margin of 0.1), which the margin absorbs.
// bf16 has no ranges and keeps E.
inline constexpr double kInt8Margin = 0.2;
double verification_target(double max_rel_error, bool int8_offered);

// The backends among `backends` whose compiler computes in int8 (onednn_int8).
std::vector<std::string> int8_backends(const std::vector<BackendSpec>& backends);

// The graph partition_within_budget searches: `graph` with its int8 sources' calibrated ranges
// when E > 0 and an int8 backend is offered, `graph` itself otherwise. For callers that price its
// candidates ahead of the search (tune's measurement pass), so they measure the same functions.
Graph budget_search_graph(const Graph& graph, const std::vector<BackendSpec>& backends, const AccuracyBudget& budget);

// The factor the proxy budget grows by after a plan verified at `error` against `target`:
// (0.9 target / error)^2 clamped to [1.5, 8], 1 when there is no room (error >= 0.9 target).
double budget_growth(double target, double error);

// partition_graph under the budget (see the header comment). Throws UserError for a negative or
// non-finite E, E > 0 with a search other than collage, or a backend that cannot run here.
PartitionOutcome partition_within_budget(const Graph& graph, const std::vector<BackendSpec>& backends,
                                         const CostModel& model, const PartitionOptions& options,
                                         const AccuracyBudget& budget);

}  // namespace tessera
