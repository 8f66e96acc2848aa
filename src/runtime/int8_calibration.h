// Calibration for int8 precision variants (onednn_int8) under an accuracy budget: the activation
// ranges their convolutions and matmuls quantize with, and each int8 candidate's error on the
// calibration data.
//
// Sources. Input 0 of every Conv with a 4-D input, MatMul and Gemm, when it is an f32 activation
// (not a constant): the values an int8 primitive quantizes; and input 1 of a MatMul when it is
// computed too (attention's Q·K^T and softmax·V: both operands quantized per tensor,
// onednn_int8_act_matmul.cc). Constant weights need no range: the variant scales them per output
// channel from their own values when it runs.
//
// Ranges, from ref's fp32 interpretation of the model on the calibration inputs (the one
// PlanErrorCheck already runs), per source value v:
//   "minmax"          [min v, max v]: nothing saturates on the calibration data; one outlier
//                     widens the step for every other element.
//   "percentile:<p>"  [q(1 - p/100), q(p/100)], q the quantiles of v's elements (p in (50, 100]):
//                     the tails beyond them saturate, the step shrinks. The variant widens either
//                     range to hold 0 (zero must be exact: padding, ReLU outputs).
//   "mse"             [r min v, r max v], r in {1, 0.98, ..., 0.30} the ratio whose u8 quantization
//                     (as the variant quantizes) of v has the least squared error: clips the tails
//                     only as far as the finer step pays for what saturates.
// Which serves better is measured per model (docs/benchmarks.md, "int8 by accuracy budget").
//
// Candidate errors. An int8 candidate's *local* error is its function (extracted from the ranged
// graph, compiled by its backend, plain layouts, 1 compute thread) run on ref's values of its
// inputs, against ref's values of its outputs: max over outputs of the relative L2 error; +inf
// when the backend cannot compile or run it. Random inputs (what a timing measurement runs)
// cannot give this for int8: the ranges fit the data, not N(0, 1). Cached per (backend, node set).
//
// What the budget adds up (in quadrature: budgeted_partition.h) is each candidate's *end-to-end*
// error: for a candidate with one int8 anchor (Conv/MatMul/Gemm whose source has a range), the
// error the model's outputs read when
// that anchor alone runs int8 (its one-node function compiled by the backend, run on ref's values
// of its inputs; ref then interprets every node downstream of it from there; max over outputs of
// the relative L2 error against ref's). The local error misjudges this both ways: resnet18's stem
// convolution reads 0.012 at its own output and 0.001 at the logits, its Gemm 0.006 at both, and
// summed over the model the local errors make 0.16 where the whole model in int8 reads 0.013
// (the end-to-end ones add up roughly in quadrature: sqrt of the sum of squares 0.015). An
// anchor the backend declines in int8 (built as f32 inside its candidates) adds 0, one whose
// one-node function fails otherwise (KernelError) +inf. One
// computation per anchor, the first time an error is asked for. A candidate with several int8
// anchors is measured the same way as a whole (its function run int8, ref downstream): inside
// one function the anchors pass u8 values to each other (onednn_int8_chain.h), and measured
// whole its error is what runs; one computation per such candidate.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/calibrated_ranges.h"
#include "search/search_problem.h"
#include "tessera/host_tensor.h"
#include "tessera/plan.h"

namespace tessera {

// The values an int8 variant quantizes (see above), ascending.
std::vector<ValueId> int8_sources(const Graph& graph);

// Ranges of `graph`'s int8 sources from `values` (ref's value of every ValueId). `method`:
// "minmax", "mse" or "percentile:<p>"; UserError otherwise.
PlanQuantization calibrate_ranges(const Graph& graph, const std::vector<HostTensor>& values, const std::string& method);

class Int8CandidateErrors {
 public:
  // `ranged`: the graph the search runs on (with its ranges); `values`: ref's values by ValueId.
  Int8CandidateErrors(const Graph& ranged, const std::vector<HostTensor>& values) : graph_(ranged), values_(values) {}
  // The local error of problem.candidates[i] (see above); +inf when its backend cannot compile or run it.
  double error(const SearchProblem& problem, int candidate);
  // The end-to-end error of problem.candidates[i] (see above): +inf where error() is, else its
  // int8 anchor's end-to-end error, or, for a candidate with several, the error the model's
  // outputs read when the candidate's whole function runs int8 (ref downstream, as for one anchor).
  // A function keeps u8 values between its int8 convolutions, so its anchors' errors are not
  // independent roundings of f32 values; measured whole, they are what runs.
  double end_to_end_error(const SearchProblem& problem, int candidate);
  // The end-to-end error of node n alone in `backend`'s int8 (0 for a node that is no int8 anchor).
  double anchor_error(const std::string& backend, NodeId n);

 private:
  const Graph& graph_;
  const std::vector<HostTensor>& values_;
  std::map<std::pair<std::string, std::vector<int>>, double> cache_;
  std::map<std::pair<std::string, NodeId>, double> anchor_cache_;
  std::map<std::pair<std::string, std::vector<int>>, double> set_cache_;
  // The error at the model's outputs when `nodes` (ascending) run as one function in `backend`
  // on ref's values of its inputs and ref interprets everything downstream.
  double downstream_error(const std::string& backend, const std::vector<int>& nodes);
};

}  // namespace tessera
