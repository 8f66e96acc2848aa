// Calibration: measuring this machine's roofline numbers (`tessera calibrate`).
//
// Terms and method (each figure is the best of `repeats` runs, so a noisy shared machine errs
// towards its real capability rather than towards its neighbours' load):
//   peak_gflops       OpenBLAS cblas_sgemm, n x n x n (default 1024), 2 n^3 FLOPs per call
//   bandwidth_gbs     a copy loop over two arrays far larger than the caches (default 2 x 128 MiB),
//                     split over the threads; read + write bytes per second
//   call_overhead_us  median of many 1x1x1 sgemm calls: the fixed price of one library call
//
// The result becomes a DeviceProfile for device "cpu" named "host", with per-backend efficiency
// starting points (documented in docs/formats.md) that a measured run can refit.
// Scale: about 2-5 seconds on a 2-core machine.
#pragma once

#include <cstddef>
#include <string>

#include "cost_models/device_profile.h"

namespace tessera {

struct CalibrateOptions {
  int gemm_n = 1024;
  int repeats = 5;
  size_t copy_bytes = size_t{128} << 20;   // per array
  int threads = 0;                         // <= 0: all cores
};

struct Calibration {
  double peak_gflops = 0.0;
  double bandwidth_gbs = 0.0;
  double call_overhead_us = 0.0;
  int threads = 0;
  std::string cpu;   // /proc/cpuinfo model name
};

Calibration calibrate_host(const CalibrateOptions& options);
// The profile `tessera calibrate` writes: measured numbers plus default efficiency factors.
DeviceProfile host_profile(const Calibration& c, const CalibrateOptions& options);

}  // namespace tessera
