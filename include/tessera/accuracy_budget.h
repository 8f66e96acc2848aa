// An accuracy budget: how far a plan's outputs may stray from fp32 (partition/tune
// `max_rel_error`), and the calibration inputs that error is verified on.
//
// The error of a plan is max over graph outputs of ||y - y_fp32||_2 / ||y_fp32||_2, y_fp32 being
// ref's fp32 interpretation of the whole model on the same inputs and weights. max_rel_error = 0
// means fp32 plans: reduced-precision backends (onednn_bf16, onednn_int8) are left out. The method that finds
// the cheapest plan within a budget is partition_within_budget (src/runtime/budgeted_partition.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tessera/host_tensor.h"

namespace tessera {

struct AccuracyBudget {
  double max_rel_error = 0.0;                      // E; 0 = fp32 plans
  std::map<std::string, HostTensor> calibration;   // input name -> data; the rest seeded random
  uint64_t seed = 0;                               // seeded inputs and missing weights
  int max_rounds = 6;                              // search + verify rounds at most (+1 fp32 fallback)
  // How an int8 variant's activation ranges come from the calibration inputs: "minmax" or
  // "percentile:<p>" (src/runtime/int8_calibration.h).
  std::string calibration_ranges = "minmax";
};

}  // namespace tessera
