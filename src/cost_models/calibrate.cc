// Measuring this machine's peak, bandwidth and call overhead. See src/cost_models/calibrate.h.
#include "cost_models/calibrate.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "tessera/error.h"
#include "cost_models/machine.h"

namespace tessera {

namespace {
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double measure_gemm_gflops(int n, int repeats) {
  std::vector<float> a(static_cast<size_t>(n) * n, 1.0f), b(a.size(), 0.5f), c(a.size(), 0.0f);
  double best = 1e30;
  for (int r = 0; r <= repeats; ++r) {   // the first run warms up threads and pages
    auto t = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                c.data(), n);
    double s = seconds_since(t);
    if (r > 0) best = std::min(best, s);
  }
  return 2.0 * n * double(n) * n / best / 1e9;
}

double measure_copy_gbs(size_t bytes, int repeats, tbb::task_arena& arena) {
  size_t n = bytes / sizeof(float);
  std::unique_ptr<float[]> src(new float[n]), dst(new float[n]);
  const size_t chunk = size_t{1} << 20;   // floats per task
  auto copy = [&] {
    arena.execute([&] {
      tbb::parallel_for(size_t{0}, (n + chunk - 1) / chunk, [&](size_t i) {
        size_t lo = i * chunk, len = std::min(chunk, n - lo);
        std::memcpy(dst.get() + lo, src.get() + lo, len * sizeof(float));
      });
    });
  };
  arena.execute([&] {   // touch both arrays, in parallel, so page faults are not timed
    tbb::parallel_for(size_t{0}, n, [&](size_t i) { src[i] = float(i & 1023); dst[i] = 0.0f; });
  });
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto t = Clock::now();
    copy();
    best = std::min(best, seconds_since(t));
  }
  TESSERA_CHECK(dst[n - 1] == src[n - 1], "copy loop did not copy");
  return 2.0 * static_cast<double>(n * sizeof(float)) / best / 1e9;
}

double measure_call_overhead_us() {
  float a = 1.0f, b = 2.0f, c = 0.0f;
  constexpr int kBatch = 1000;
  std::vector<double> per_call;
  for (int r = 0; r < 21; ++r) {
    auto t = Clock::now();
    for (int i = 0; i < kBatch; ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
    }
    per_call.push_back(seconds_since(t) / kBatch * 1e6);
  }
  std::nth_element(per_call.begin(), per_call.begin() + per_call.size() / 2, per_call.end());
  return per_call[per_call.size() / 2];
}
}  // namespace

Calibration calibrate_host(const CalibrateOptions& o) {
  Calibration c;
  c.threads = o.threads > 0 ? o.threads : tbb::info::default_concurrency();
  c.cpu = cpu_model_name();
  openblas_set_num_threads(c.threads);
  tbb::task_arena arena(c.threads);
  c.peak_gflops = measure_gemm_gflops(o.gemm_n, std::max(1, o.repeats));
  c.bandwidth_gbs = measure_copy_gbs(o.copy_bytes, std::max(1, o.repeats), arena);
  c.call_overhead_us = measure_call_overhead_us();
  return c;
}

DeviceProfile host_profile(const Calibration& c, const CalibrateOptions& o) {
  DeviceProfile p;
  p.name = "host";
  p.device = "cpu";
  p.source = "tessera calibrate on " + c.cpu + ", " + std::to_string(c.threads) + " threads: OpenBLAS sgemm " +
             std::to_string(o.gemm_n) + "^3, memcpy of 2 x " + std::to_string(o.copy_bytes >> 20) +
             " MiB, 1x1x1 sgemm call; best of " + std::to_string(o.repeats);
  p.peak_gflops = c.peak_gflops;
  p.bandwidth_gbs = c.bandwidth_gbs;
  p.call_overhead_us = c.call_overhead_us;
  // Starting points: the sgemm that measured peak is the library backends' best case; reference
  // kernels reach a small fraction of it. A measured run refits these (docs/formats.md).
  // onednn_bf16 computes ~2x faster than f32 where bf16 is native, but a factor is at most 1 of
  // the f32 peak: 1.0 is the closest a profile can say. onednn_int8's convolutions and matmuls are
  // priced at 4x the f32 rate by the roofline itself (roofline_cost_model.cc).
  p.efficiency = {{"default", {0.5, 0.8}}, {"blas", {0.9, 0.9}}, {"onednn", {0.9, 0.9}},
                  {"eigen", {0.7, 0.9}},   {"ref", {0.1, 0.6}},    {"xnnpack", {0.8, 0.9}}, {"halide", {0.5, 0.9}},
                  {"onednn_bf16", {1.0, 0.9}}, {"onednn_int8", {0.9, 0.9}}};
  // oneDNN's int8 convolutions and matmuls on VNNI (vpdpbusd: four 8-bit multiply-adds per 32-bit
  // lane, where an FMA does one f32) run at four times the f32 rate (roofline_cost_model.h).
  const std::string isa = " " + cpu_isa_flags() + " ";
  if (isa.find(" avx512_vnni ") != std::string::npos || isa.find(" avx_vnni ") != std::string::npos)
    p.efficiency["onednn"].int8_speedup = 4.0;
  return p;
}

}  // namespace tessera
