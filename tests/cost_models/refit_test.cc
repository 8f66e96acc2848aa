// The roofline refit: recovers known rates from synthetic measurements made with the model itself
// (plus noise), reports errors right on a hand-made set, writes a profile that loads and predicts
// what was fitted; the per-backend call_overhead_us of the profile format.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "cost_models/graph_builder.h"
#include "tessera/error.h"
#include "cost_models/roofline_refit.h"

using namespace tessera;

namespace {
DeviceProfile profile() {
  DeviceProfile p;
  p.name = "unit";
  p.source = "test";
  p.peak_gflops = 10.0;
  p.bandwidth_gbs = 5.0;
  p.call_overhead_us = 1.0;
  p.efficiency = {{"default", {0.5, 0.8}}, {"x", {0.9, 0.9}}};
  return p;
}

// Deterministic uniform in [0, 1) (splitmix64), the same on every standard library.
struct Uniform {
  uint64_t s;
  double operator()() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
};

// n functions of 1..3 nodes, FLOPs 1e3..1e8 and bytes 1e3..1e7 log-uniform, measured as the model
// predicts with `truth` times a noise factor within +-noise.
std::vector<RefitSample> synthetic(const std::string& backend, const RooflineRates& truth, int n, double noise,
                                   uint64_t seed) {
  Uniform u{seed};
  std::vector<RefitSample> out;
  for (int i = 0; i < n; ++i) {
    RefitSample s;
    s.backend = backend;
    s.label = "f" + std::to_string(i);
    int nodes = 1 + static_cast<int>(u() * 3);
    for (int k = 0; k < nodes; ++k) s.work.push_back({std::pow(10.0, 3 + 5 * u()), std::pow(10.0, 3 + 4 * u())});
    s.measured_s = predict_seconds(s.work, truth) * std::exp(noise * (2 * u() - 1));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<const RefitSample*> ptrs(const std::vector<RefitSample>& v) {
  std::vector<const RefitSample*> out;
  for (const RefitSample& s : v) out.push_back(&s);
  return out;
}
}  // namespace

TEST_CASE("refit: recovers the rates that generated noisy measurements") {
  const RooflineRates x_truth{3e9, 8e9, 5e-6};      // memory beats the profile's 5 GB/s (cache)
  const RooflineRates y_truth{2e8, 1.5e9, 40e-6};   // a slow backend with a big call overhead
  std::vector<RefitSample> samples = synthetic("x", x_truth, 80, 0.05, 1);
  for (RefitSample& s : synthetic("y", y_truth, 80, 0.05, 2)) samples.push_back(std::move(s));

  RefitResult r = refit_profile(profile(), samples, "fitted in a test");
  REQUIRE(r.backends.size() == 2);
  for (const BackendRefit& b : r.backends) {
    const RooflineRates& t = b.backend == "x" ? x_truth : y_truth;
    INFO(b.backend);
    CHECK(b.fitted);
    CHECK(b.samples == 80);
    CHECK(b.rates.flops_per_s == Approx(t.flops_per_s).epsilon(0.05));
    CHECK(b.rates.bytes_per_s == Approx(t.bytes_per_s).epsilon(0.05));
    CHECK(b.rates.overhead_s == Approx(t.overhead_s).epsilon(0.10));
    CHECK(b.error_after.median_abs_rel < 0.05);       // the noise, no more
    CHECK(b.error_after.mean_abs_rel < b.error_before.mean_abs_rel);
  }

  // Into the format: bandwidth raised to x's 8 GB/s, factors relative to it, absolute rates kept.
  const DeviceProfile& p = r.profile;
  CHECK(p.source == "fitted in a test");
  CHECK(p.peak_gflops == 10.0);
  CHECK(p.bandwidth_gbs == Approx(r.backends[0].rates.bytes_per_s / 1e9));
  CHECK(p.efficiency.at("x").memory == 1.0);
  CHECK(p.efficiency.at("default").memory == Approx(0.8 * 5.0 / p.bandwidth_gbs));
  CHECK(p.efficiency.at("default").compute == 0.5);
  REQUIRE(p.efficiency.at("y").call_overhead_us);
  CHECK(*p.efficiency.at("y").call_overhead_us == Approx(r.backends[1].rates.overhead_s * 1e6));

  // The written profile loads and the roofline model predicts with it exactly what was fitted.
  DeviceProfile back = parse_device_profile(device_profile_to_json(p), "refit.json");
  for (const BackendRefit& b : r.backends) {
    const RefitSample& s = samples[b.backend == "x" ? 0 : 80];
    CHECK(roofline(s.work, back, back.efficiency_for(b.backend)).seconds ==
          Approx(predict_seconds(s.work, b.rates)).epsilon(1e-9));
  }
}

TEST_CASE("refit: the error report on a hand-made set") {
  // 1 GFLOP/s, 1 GB/s, no overhead: 1000 FLOPs predict 1 us.
  const RooflineRates rates{1e9, 1e9, 0.0};
  std::vector<RefitSample> s;
  for (double measured_us : {1.0, 2.0, 0.5, 1.25}) s.push_back({"x", "mm", {{1000.0, 0.0}}, measured_us * 1e-6});
  RefitError e = roofline_error(ptrs(s), rates);
  // |pred - measured| / measured: 0, 0.5, 1.0, 0.2.
  CHECK(e.n == 4);
  CHECK(e.median_abs_rel == Approx(0.35));
  CHECK(e.mean_abs_rel == Approx(0.425));
  const double l2 = std::log(2.0), l125 = std::log(1.25);
  CHECK(e.rms_log == Approx(std::sqrt((2 * l2 * l2 + l125 * l125) / 4)));
  CHECK(roofline_error({}, rates).n == 0);
}

TEST_CASE("refit: a backend with too few samples keeps its entry; bad measurements are user errors") {
  DeviceProfile base = profile();
  std::vector<RefitSample> s = {{"x", "a", {{1e6, 1e3}}, 1e-3}, {"x", "b", {{2e6, 1e3}}, 2e-3}};
  RefitResult r = refit_profile(base, s, "two samples");
  REQUIRE(r.backends.size() == 1);
  CHECK_FALSE(r.backends[0].fitted);
  CHECK(r.profile.efficiency.at("x").compute == 0.9);
  CHECK_FALSE(r.profile.efficiency.at("x").call_overhead_us);
  CHECK(r.backends[0].error_after.median_abs_rel == r.backends[0].error_before.median_abs_rel);

  s.push_back({"x", "zero", {{1e6, 1e3}}, 0.0});
  CHECK_THROWS_AS(refit_profile(base, s, "bad"), UserError);
}

TEST_CASE("device profile: per-backend call_overhead_us is optional and used by the roofline") {
  DeviceProfile p = profile();
  const std::string old_json = device_profile_to_json(p);
  CHECK(old_json.find("call_overhead_us\": 1") != std::string::npos);
  CHECK(old_json.find("\"call_overhead_us\"", old_json.find("\"efficiency\"")) == std::string::npos);
  const std::string old_fp = p.fingerprint();

  p.efficiency["x"].call_overhead_us = 7.0;
  DeviceProfile back = parse_device_profile(device_profile_to_json(p), "p.json");
  REQUIRE(back.efficiency.at("x").call_overhead_us);
  CHECK(*back.efficiency.at("x").call_overhead_us == 7.0);
  CHECK(back.fingerprint() != old_fp);
  std::vector<NodeWork> nothing;
  CHECK(roofline(nothing, back, back.efficiency_for("x")).seconds == Approx(7e-6));
  CHECK(roofline(nothing, back, back.efficiency_for("other")).seconds == Approx(1e-6));

  p.efficiency["x"].call_overhead_us = -1.0;
  CHECK_THROWS_AS(parse_device_profile(device_profile_to_json(p), "p.json"), UserError);
}
