// Per-backend roofline factors from three probes. See backend_fit.h.
#include "cost_models/measure/backend_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "cost_models/measure/measure_function.h"
#include "backends/compilers/backend_compiler.h"
#include "cost_models/roofline_cost_model.h"

namespace tessera {
namespace {

struct Probe {
  std::string name;
  Graph fn;
  bool compute;   // compute-bound (a throughput) or memory-bound (a bandwidth)
};

ValueId input(Graph& g, const std::string& name, Shape shape) {
  ValueId v = g.add_value(Value{name, TensorType{DType::f32, std::move(shape)}, ValueKind::Input});
  g.inputs.push_back(v);
  return v;
}

ValueId node(Graph& g, const std::string& op, std::vector<ValueId> in, Shape out, Attributes attrs = {}) {
  ValueId v = g.add_value(Value{op + "_out", TensorType{DType::f32, std::move(out)}, ValueKind::Intermediate});
  Node n;
  n.name = op + "_0";
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = {v};
  n.attrs = std::move(attrs);
  g.add_node(std::move(n));
  g.outputs.push_back(v);
  return v;
}

std::vector<Probe> probes() {
  std::vector<Probe> out;
  {
    Graph g;
    ValueId x = input(g, "x", {1, 64, 56, 56}), w = input(g, "w", {64, 64, 3, 3}), b = input(g, "b", {64});
    node(g, "Conv", {x, w, b}, {1, 64, 56, 56},
         {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"kernel_shape", std::vector<int64_t>{3, 3}}});
    out.push_back({"conv", std::move(g), true});
  }
  {
    Graph g;
    ValueId x = input(g, "x", {128, 768}), w = input(g, "w", {768, 768});
    node(g, "MatMul", {x, w}, {128, 768});
    out.push_back({"gemm", std::move(g), true});
  }
  {
    Graph g;
    ValueId x = input(g, "x", {1, 16 << 20}), y = input(g, "y", {1, 16 << 20});
    node(g, "Add", {x, y}, {1, 16 << 20});
    out.push_back({"add", std::move(g), false});
  }
  return out;
}

// FLOPs (compute) or boundary bytes (memory) of a probe, per second, in GFLOP/s or GB/s.
std::optional<double> rate(const BackendCompiler& compiler, const Probe& p, const TimingOptions& t) {
  try {
    const Timing timing = measure_function(compiler, p.fn, t);
    if (!(timing.p10 > 0)) return std::nullopt;
    double work = 0;
    for (const NodeWork& w : roofline_work(p.fn)) work += p.compute ? w.flops : w.bytes;
    return work / timing.p10 / 1e9;
  } catch (const std::exception&) {
    return std::nullopt;   // the backend does not take this probe: no evidence either way
  }
}

}  // namespace

std::vector<std::string> fit_backend_efficiency(DeviceProfile& profile, const BackendFitOptions& o) {
  std::vector<std::string> names = o.backends;
  if (names.empty())
    for (const std::string& b : backend_compiler_names())
      if (b != "halide" && b.find('_') == std::string::npos) names.push_back(b);
  set_compute_threads(std::max(1, o.threads));
  TimingOptions timing;
  timing.budget = std::chrono::duration<double>(o.budget_s);
  timing.max_repeats = 20;

  const std::vector<Probe> all = probes();
  std::map<std::string, double> gflops, gbs;   // per backend, where measured
  for (const std::string& b : names) {
    std::unique_ptr<BackendCompiler> compiler;
    try {
      compiler = make_backend_compiler(b);
    } catch (const std::exception&) {
      continue;
    }
    double log_sum = 0;
    int n = 0;
    for (const Probe& p : all) {
      std::optional<double> r = rate(*compiler, p, timing);
      if (!r) continue;
      if (p.compute) {
        log_sum += std::log(*r);
        ++n;
      } else {
        gbs[b] = *r;
      }
    }
    if (n > 0) gflops[b] = std::exp(log_sum / n);
  }
  const double old_peak = profile.peak_gflops, old_bandwidth = profile.bandwidth_gbs;
  for (const auto& [b, r] : gflops) profile.peak_gflops = std::max(profile.peak_gflops, r);
  for (const auto& [b, r] : gbs) profile.bandwidth_gbs = std::max(profile.bandwidth_gbs, r);
  // Backends without a figure keep the speed their starting factor gave them, not a share of a
  // peak that just rose.
  for (auto& [b, e] : profile.efficiency) {
    if (!gflops.count(b)) e.compute = std::clamp(e.compute * old_peak / profile.peak_gflops, 1e-3, 1.0);
    if (!gbs.count(b)) e.memory = std::clamp(e.memory * old_bandwidth / profile.bandwidth_gbs, 1e-3, 1.0);
  }

  std::vector<std::string> lines;
  for (const std::string& b : names) {
    if (!gflops.count(b) && !gbs.count(b)) continue;
    Efficiency e = profile.efficiency_for(b);
    char line[96];
    std::string text = b + ":";
    if (gflops.count(b)) {
      e.compute = std::clamp(gflops[b] / profile.peak_gflops, 1e-3, 1.0);
      std::snprintf(line, sizeof line, " %.1f GFLOP/s", gflops[b]);
      text += line;
    }
    if (gbs.count(b)) {
      e.memory = std::clamp(gbs[b] / profile.bandwidth_gbs, 1e-3, 1.0);
      std::snprintf(line, sizeof line, "%s %.1f GB/s", gflops.count(b) ? "," : "", gbs[b]);
      text += line;
    }
    profile.efficiency[b] = e;
    lines.push_back(text);
  }
  return lines;
}

}  // namespace tessera
