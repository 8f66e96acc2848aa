// backend_fit: the per-backend roofline factors of a host profile, measured on this machine.
//
// Calibration (calibrate.h) measures the machine: OpenBLAS sgemm peak, copy bandwidth, call
// overhead. How much of that each backend reaches was a table of guesses (onednn 0.9, ref 0.1, ...)
// and on a CPU newer than OpenBLAS's kernel tables the guess is far off: oneDNN's JIT convolutions
// ran at ~1.6x the sgemm "peak" (resnet18 predicted 1.55x too slow after calibration alone). So
// the first roofline use also times three small probes on every real backend that takes them:
//
//   conv   Conv 64->64, 3x3, 56x56 (resnet's staple, 0.23 GFLOP)         compute-bound
//   gemm   MatMul [128, 768] x [768, 768] (a BERT projection, 0.15 GFLOP) compute-bound
//   add    Add of two 16 Mi-float tensors (192 MiB of traffic)             memory-bound
//
// The Add is larger than any L3 cache: at 48 MiB it partly stayed in cache on this EPYC and the
// fitted bandwidth (34-46 GB/s) predicted mobilenet_v2's memory-bound layers 1.4x too fast.
//
// compute throughput = FLOPs / fast time, the geometric mean over the compute probes a backend
// takes; bandwidth = boundary bytes / fast time (the 10th percentile of the timed runs: on a shared
// machine the fast runs are the machine, the slow ones its neighbours, as in calibrate.h) (roofline_work, so the numbers are in the
// roofline model's own terms). Peak and bandwidth rise to the best backend's when it beats the
// calibration (a factor cannot exceed 1); each backend's factor is its figure over them. A backend
// that takes no probe (a KernelUnsupported, an error) keeps the starting factor.
//
// Scale: about 1-3 s at one thread (ref's convolution dominates). Not needed for correctness:
// any factor in (0, 1] gives a valid cost model; these only make predictions match the runs.
#pragma once

#include <string>
#include <vector>

#include "cost_models/device_profile.h"

namespace tessera {

struct BackendFitOptions {
  std::vector<std::string> backends;   // empty: the real backends but halide and precision variants
  int threads = 1;                     // set_compute_threads for the probes
  double budget_s = 0.05;              // timed runs per probe stop after this (at least 3 runs)
};

// Adjusts `profile`'s peak_gflops, bandwidth_gbs and efficiency in place; returns one line per
// backend fitted ("onednn: 182.4 GFLOP/s, 24.1 GB/s"), for the progress output.
std::vector<std::string> fit_backend_efficiency(DeviceProfile& profile, const BackendFitOptions& options);

}  // namespace tessera
