// Roofline refit: grid + Nelder-Mead over (ln C, ln M, ln O) per backend. See
// src/cost_models/roofline_refit.h.
#include "cost_models/roofline_refit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "tessera/error.h"
#include "support/median.h"

namespace tessera {

namespace {
using Theta = std::array<double, 3>;   // ln flops/s, ln bytes/s, ln overhead s

constexpr double kPull = 1e-4;         // weight of |theta - theta_0|^2
constexpr double kLn10 = 2.302585092994046;
constexpr double kMinOverhead = 1e-9;  // s; the overhead's log needs a floor

RooflineRates to_rates(const Theta& t) { return {std::exp(t[0]), std::exp(t[1]), std::exp(t[2])}; }
Theta to_theta(const RooflineRates& r) {
  return {std::log(r.flops_per_s), std::log(r.bytes_per_s), std::log(std::max(r.overhead_s, kMinOverhead))};
}

// The search box around theta_0: compute 1e-5..1e2 x start, memory 1e-3..1e3 x start (caches),
// overhead 1 ns..10 ms.
struct Box {
  Theta lo, hi;
  Theta clamp(Theta t) const {
    for (int i = 0; i < 3; ++i) t[i] = std::clamp(t[i], lo[i], hi[i]);
    return t;
  }
};
Box box_around(const Theta& t0) {
  return Box{{t0[0] - 5 * kLn10, t0[1] - 3 * kLn10, std::log(kMinOverhead)},
             {t0[0] + 2 * kLn10, t0[1] + 3 * kLn10, std::log(1e-2)}};
}

struct Objective {
  const std::vector<const RefitSample*>& samples;
  Theta t0;
  double int8_speedup = 1.0;   // kept, not fitted
  double operator()(const Theta& t) const {
    RooflineRates r = to_rates(t);
    r.int8_speedup = int8_speedup;
    double sum = 0.0;
    for (const RefitSample* s : samples) {
      double d = std::log(predict_seconds(s->work, r)) - std::log(s->measured_s);
      sum += d * d;
    }
    double pull = 0.0;
    for (int i = 0; i < 3; ++i) pull += (t[i] - t0[i]) * (t[i] - t0[i]);
    return sum / static_cast<double>(samples.size()) + kPull * pull;
  }
};

// Nelder-Mead (standard coefficients) in the box; returns the best vertex.
Theta nelder_mead(const Objective& f, const Box& box, Theta start, double step, int max_iter) {
  std::array<Theta, 4> x;
  std::array<double, 4> fx;
  x[0] = box.clamp(start);
  for (int i = 0; i < 3; ++i) {
    x[i + 1] = x[0];
    x[i + 1][i] += (x[0][i] + step <= box.hi[i]) ? step : -step;
  }
  for (int i = 0; i < 4; ++i) fx[i] = f(x[i]);
  auto along = [&](const Theta& c, const Theta& p, double k) {
    Theta r;
    for (int i = 0; i < 3; ++i) r[i] = c[i] + k * (p[i] - c[i]);
    return box.clamp(r);
  };
  for (int iter = 0; iter < max_iter; ++iter) {
    std::array<int, 4> o{0, 1, 2, 3};
    std::stable_sort(o.begin(), o.end(), [&](int a, int b) { return fx[a] < fx[b]; });
    std::array<Theta, 4> sx;
    std::array<double, 4> sf;
    for (int i = 0; i < 4; ++i) sx[i] = x[o[i]], sf[i] = fx[o[i]];
    x = sx, fx = sf;
    if (fx[3] - fx[0] < 1e-13) break;
    Theta c{0, 0, 0};
    for (int i = 0; i < 3; ++i)
      for (int d = 0; d < 3; ++d) c[d] += x[i][d] / 3.0;
    Theta xr = along(c, x[3], -1.0);
    double fr = f(xr);
    if (fr < fx[0]) {
      Theta xe = along(c, x[3], -2.0);
      double fe = f(xe);
      if (fe < fr) x[3] = xe, fx[3] = fe;
      else x[3] = xr, fx[3] = fr;
    } else if (fr < fx[2]) {
      x[3] = xr, fx[3] = fr;
    } else {
      Theta xc = fr < fx[3] ? along(c, xr, 0.5) : along(c, x[3], 0.5);
      double fc = f(xc);
      if (fc < std::min(fr, fx[3])) {
        x[3] = xc, fx[3] = fc;
      } else {
        for (int i = 1; i < 4; ++i) x[i] = along(x[0], x[i], 0.5), fx[i] = f(x[i]);
      }
    }
  }
  int best = static_cast<int>(std::min_element(fx.begin(), fx.end()) - fx.begin());
  return x[best];
}

}  // namespace

RooflineRates rates_of(const DeviceProfile& p, const Efficiency& e) {
  return {p.peak_gflops * 1e9 * e.compute, p.bandwidth_gbs * 1e9 * e.memory, p.call_overhead_s(e), e.int8_speedup.value_or(1.0)};
}

double predict_seconds(const std::vector<NodeWork>& work, const RooflineRates& r) {
  double s = 0.0;
  for (const NodeWork& w : work)
    s += std::max(w.flops / (w.int8 ? r.flops_per_s * r.int8_speedup : r.flops_per_s), w.bytes / r.bytes_per_s);
  return s + r.overhead_s;
}

RefitError roofline_error(const std::vector<const RefitSample*>& samples, const RooflineRates& rates) {
  RefitError e;
  e.n = samples.size();
  if (samples.empty()) return e;
  std::vector<double> rel;
  double sum_rel = 0.0, sum_log2 = 0.0;
  for (const RefitSample* s : samples) {
    double pred = predict_seconds(s->work, rates);
    rel.push_back(std::abs(pred - s->measured_s) / s->measured_s);
    sum_rel += rel.back();
    double d = std::log(pred) - std::log(s->measured_s);
    sum_log2 += d * d;
  }
  e.median_abs_rel = median(rel);
  e.mean_abs_rel = sum_rel / static_cast<double>(e.n);
  e.rms_log = std::sqrt(sum_log2 / static_cast<double>(e.n));
  return e;
}

RooflineRates fit_roofline(const std::vector<const RefitSample*>& samples, const RooflineRates& start) {
  TESSERA_CHECK(!samples.empty(), "fit_roofline without samples");
  const Theta t0 = to_theta(start);
  const Box box = box_around(t0);
  Objective f{samples, t0, start.int8_speedup};
  // Grid: half-decade steps over the box (compute 15 x memory 13 x overhead 15, ~3000 points).
  Theta best = t0;
  double fbest = f(t0);
  for (double a = box.lo[0]; a <= box.hi[0] + 1e-9; a += 0.5 * kLn10)
    for (double b = box.lo[1]; b <= box.hi[1] + 1e-9; b += 0.5 * kLn10)
      for (double c = box.lo[2]; c <= box.hi[2] + 1e-9; c += 0.5 * kLn10) {
        Theta t{a, b, c};
        double v = f(t);
        if (v < fbest) best = t, fbest = v;
      }
  // Refine; restart from the result (a fresh simplex) until that gains nothing.
  for (int round = 0; round < 8; ++round) {
    Theta next = nelder_mead(f, box, best, round == 0 ? 0.5 * kLn10 : 0.1, 2000);
    double fnext = f(next);
    bool gained = fnext < fbest - 1e-12;
    if (fnext < fbest) best = next, fbest = fnext;
    if (!gained) break;
  }
  RooflineRates out = to_rates(best);
  out.int8_speedup = start.int8_speedup;
  return out;
}

RefitResult refit_profile(const DeviceProfile& base, const std::vector<RefitSample>& samples,
                          const std::string& source) {
  std::map<std::string, std::vector<const RefitSample*>> by_backend;
  for (const RefitSample& s : samples) {
    if (!(s.measured_s > 0.0) || !std::isfinite(s.measured_s)) {
      throw UserError(s.backend, s.label, "measured cost must be a positive number of seconds");
    }
    by_backend[s.backend].push_back(&s);
  }
  RefitResult out;
  double peak = base.peak_gflops * 1e9, bw = base.bandwidth_gbs * 1e9;
  for (const auto& [backend, group] : by_backend) {
    BackendRefit b;
    b.backend = backend;
    b.samples = group.size();
    b.before = base.efficiency_for(backend);
    RooflineRates start = rates_of(base, b.before);
    b.error_before = roofline_error(group, start);
    b.fitted = group.size() >= 3;
    b.rates = b.fitted ? fit_roofline(group, start) : start;
    peak = std::max(peak, b.rates.flops_per_s);
    bw = std::max(bw, b.rates.bytes_per_s);
    out.backends.push_back(std::move(b));
  }

  DeviceProfile& p = out.profile;
  p = base;
  p.source = source;
  p.peak_gflops = peak / 1e9;
  p.bandwidth_gbs = bw / 1e9;
  // Same absolute rates for every entry the fit did not touch.
  for (auto& [name, e] : p.efficiency) {
    e.compute = std::min(1.0, e.compute * base.peak_gflops / p.peak_gflops);
    e.memory = std::min(1.0, e.memory * base.bandwidth_gbs / p.bandwidth_gbs);
  }
  for (BackendRefit& b : out.backends) {
    if (b.fitted) {
      Efficiency e;
      e.compute = std::min(1.0, b.rates.flops_per_s / peak);
      e.memory = std::min(1.0, b.rates.bytes_per_s / bw);
      e.call_overhead_us = b.rates.overhead_s * 1e6;
      e.int8_speedup = base.efficiency_for(b.backend).int8_speedup;
      p.efficiency[b.backend] = e;
    }
    b.after = p.efficiency_for(b.backend);
    b.error_after = roofline_error(by_backend[b.backend], rates_of(p, b.after));
  }
  return out;
}

}  // namespace tessera
