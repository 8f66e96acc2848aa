// Bias correction for int8 convolutions and matmuls under an accuracy budget: per output channel,
// the mean error int8 adds to an anchor's result over the calibration data, subtracted from it.
//
// Why. Rounding a weight channel W[o] to s8 leaves an error dW[o] that every output position of
// that channel sees: y[o] = (W[o] + dW[o]) · x, whose mean over positions is off by
// dW[o] · mean(x). Where x has a non-zero mean (every ReLU output does), that is a systematic
// offset per channel, not noise, and the layers after it carry it to the model's output as a
// shift rather than averaging it away (Nagel et al., "Data-Free Quantization Through Weight
// Equalization and Bias Correction", ICCV 2019, section 4.2; here the empirical form, from data).
//
//   y_int8[o] = conv_u8s8(x, W)[o] * scale[o] + B[o]          (onednn_int8_variant.cc)
//   shift[o]  = mean over the calibration data's positions of (y_int8[o] - y_fp32[o])
//   y'[o]     = y_int8[o] - shift[o]                           (one more per-channel post-op add)
//
// Each anchor (Conv with a 4-D source, MatMul/Gemm with constant 2-D weights, a ranged source) is
// measured alone, its one-node function compiled by the int8 backend and run on ref's fp32
// values of its inputs, as its end-to-end error is measured (int8_calibration.h): the shift is
// then a property of the anchor, whatever else the plan runs in int8, and the error the budget
// adds up is the corrected anchor's. The channel axis is 1 for a Conv's output, the last axis for
// a MatMul's or Gemm's. An anchor whose output has fewer than kMinPositions positions per channel
// is left alone: a classifier's single row would fit the calibration sample's own error, which a
// held-out input does not share. An anchor the backend declines in int8 gets none.
//
// The shifts travel with the ranges (Value::int8_bias_shift, PlanQuantization::bias_shifts) and
// are part of a function's identity; measured on resnet18 (docs/benchmarks.md, "int8 transformers
// and bias correction"). Cost: one int8 run of each anchor's one-node function at calibration.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/host_tensor.h"
#include "tessera/plan.h"

namespace tessera {

inline constexpr int64_t kMinPositions = 16;

// `quantization` with its bias_shifts computed (see above) for `backend`'s int8 anchors of
// `graph` (the model the ranges are for), from `values` (ref's value of every ValueId of `graph`
// on the calibration data). Deterministic: one compute thread, anchors in graph order.
PlanQuantization with_int8_bias_shifts(PlanQuantization quantization, const Graph& graph, const std::vector<HostTensor>& values,
                                       const std::string& backend);

}  // namespace tessera
