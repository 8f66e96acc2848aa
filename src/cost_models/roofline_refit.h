// Roofline refit: the efficiency factors and call overhead of a device profile, fitted to measured
// costs (`tessera refit`).
//
// Terms. A RefitSample is one measured candidate function on one backend: its roofline work (per
// node FLOPs and boundary bytes, roofline_cost_model.h) and its measured median seconds. Per
// backend b the roofline predicts
//   pred(F) = sum over nodes n of max(flops_n / C_b, bytes_n / M_b) + O_b
// with C_b = peak * e.compute (FLOP/s), M_b = bandwidth * e.memory (B/s) and O_b the call
// overhead (s). The fit chooses (C_b, M_b, O_b) minimizing
//   mean over samples (log pred - log measured)^2  +  1e-4 * |theta - theta_0|^2
// over theta = (ln C, ln M, ln O) in a box around the input profile (theta_0). Log error because
// the samples span five decades (a 1 us Relu and a 10 ms Conv must both count); the tiny pull
// towards theta_0 only decides parameters the data leave free (a backend whose samples are all
// memory-bound says nothing about its compute rate).
//
// Before/after (480 measured functions of 4 models, docs/benchmarks.md "Roofline refit"):
//   host.json        onednn {compute 0.9 of 31.7 GFLOP/s, memory 0.9 of 14.2 GB/s}, 0.08 us  median error 249%
//   host_refit.json  onednn {compute 0.65 of 134 GFLOP/s, memory 1.0 of 27.9 GB/s}, 0.32 us median error 62%
// What it cannot fix: one (compute, memory) pair per backend averages over ops; a depthwise Conv
// or an Erf that runs 10x below its backend's rate stays 10x off (--worst N lists them).
//
// Optimizer: a log-spaced grid (11 x 13 x 11) then Nelder-Mead from the best grid point, restarted
// until it stops improving. Deterministic (no random starts, fixed order), three parameters, a few
// thousand samples: milliseconds.
//
// Back into the profile format, whose factors are shares in (0, 1]: a fitted rate above the
// profile's peak (small functions run from cache, beating the DRAM bandwidth that calibrate
// measured) raises peak_gflops / bandwidth_gbs to the largest fitted rate, and every other
// factor (including "default" and backends without samples) is rescaled so its absolute rate is
// unchanged. The overhead goes to the backend's optional call_overhead_us.
//
// Not needed for correctness: any of it; the refitted profile only changes roofline estimates.
#pragma once

#include <string>
#include <vector>

#include "cost_models/device_profile.h"
#include "cost_models/roofline_cost_model.h"

namespace tessera {

struct RefitSample {
  std::string backend;
  std::string label;             // "Conv+Relu", for messages
  std::vector<NodeWork> work;    // roofline_work(fn)
  double measured_s = 0.0;       // > 0
};

// Absolute roofline parameters of one backend.
struct RooflineRates {
  double flops_per_s = 0.0;
  double bytes_per_s = 0.0;
  double overhead_s = 0.0;
  double int8_speedup = 1.0;   // the efficiency's, kept (not fitted): int8 work's rate over flops_per_s
};

struct RefitError {
  size_t n = 0;
  double median_abs_rel = 0.0;   // median of |pred - measured| / measured
  double mean_abs_rel = 0.0;
  double rms_log = 0.0;          // sqrt(mean (ln pred - ln measured)^2)
};

struct BackendRefit {
  std::string backend;
  size_t samples = 0;
  bool fitted = false;           // false: fewer than 3 samples, profile entry kept
  Efficiency before;             // input profile's entry for the backend (or default)
  Efficiency after;              // the output profile's entry
  RooflineRates rates;           // the fitted absolute parameters
  RefitError error_before;       // input profile on the samples
  RefitError error_after;        // output profile on the samples
};

struct RefitResult {
  DeviceProfile profile;               // the refitted profile
  std::vector<BackendRefit> backends;  // sorted by name
};

RooflineRates rates_of(const DeviceProfile& p, const Efficiency& e);
double predict_seconds(const std::vector<NodeWork>& work, const RooflineRates& r);

// Errors of `rates` on samples (all of them, whatever their backend).
RefitError roofline_error(const std::vector<const RefitSample*>& samples, const RooflineRates& rates);

// The least-squares log fit of one backend's samples, starting from (and pulled towards) `start`.
RooflineRates fit_roofline(const std::vector<const RefitSample*>& samples, const RooflineRates& start);

// Fits every backend that has samples and writes the result into a copy of `base`, with
// `source` as its source field. Throws UserError for a sample without a positive measurement.
RefitResult refit_profile(const DeviceProfile& base, const std::vector<RefitSample>& samples,
                          const std::string& source);

}  // namespace tessera
