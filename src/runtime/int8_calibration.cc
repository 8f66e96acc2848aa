// Ranges and candidate errors for int8 precision variants (int8_calibration.h).
#include "runtime/int8_calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "backends/compilers/backend_compiler.h"
#include "backends/ref/ref_kernels.h"
#include "partition/dataflow_index.h"
#include "tessera/error.h"
#include "partition/sub_graph.h"

namespace tessera {

std::vector<ValueId> int8_sources(const Graph& graph) {
  std::vector<char> is_source(graph.values.size(), 0);
  for (const Node& n : graph.nodes) {
    if (n.inputs.empty() || n.inputs[0] == kNoValue) continue;
    const Value& x = graph.value(n.inputs[0]);
    if (x.is_constant() || x.type.dtype != DType::f32) continue;
    if ((n.op == "Conv" && x.type.shape.size() == 4) || n.op == "MatMul" || n.op == "Gemm") is_source[static_cast<size_t>(n.inputs[0])] = 1;
    // A MatMul's computed right operand (attention's K^T and V): quantized per tensor too.
    if (n.op == "MatMul" && n.inputs.size() == 2 && n.inputs[1] != kNoValue) {
      const Value& w = graph.value(n.inputs[1]);
      if (!w.is_constant() && w.type.dtype == DType::f32) is_source[static_cast<size_t>(n.inputs[1])] = 1;
    }
  }
  std::vector<ValueId> out;
  for (size_t v = 0; v < is_source.size(); ++v)
    if (is_source[v]) out.push_back(static_cast<ValueId>(v));
  return out;
}

namespace {

// The fraction p/100 of "percentile:<p>", or 1 for "minmax" and "mse" (which starts from min/max).
double quantile_of(const std::string& method) {
  if (method == "minmax" || method == "mse") return 1.0;
  const std::string prefix = "percentile:";
  if (method.rfind(prefix, 0) == 0) {
    try {
      size_t used = 0;
      const std::string p = method.substr(prefix.size());
      const double x = std::stod(p, &used);
      if (used == p.size() && x > 50.0 && x <= 100.0) return x / 100.0;
    } catch (const std::exception&) {
    }
  }
  throw UserError::option("calibration_ranges", method, "expected minmax, mse or percentile:<p> with 50 < p <= 100");
}

// The sum of squared errors of x[0, n) quantized to u8 over [lo, hi] exactly as the variant
// quantizes (onednn_int8_variant.cc, act_quant): the range widened to hold 0, 255 steps, the zero
// point rounded, values outside saturating.
double u8_squared_error(const float* x, size_t n, float lo, float hi) {
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  const float scale = (hi - lo) / 255.0f;
  if (!(scale > 0.0f)) return 0.0;
  const float zp = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f), inv = 1.0f / scale;
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const float q = std::clamp(std::nearbyint(x[i] * inv) + zp, 0.0f, 255.0f);
    const double d = static_cast<double>((q - zp) * scale) - static_cast<double>(x[i]);
    sum += d * d;
  }
  return sum;
}

// "mse": [r lo, r hi] with [lo, hi] the min/max range and r in {1, 0.98, ..., 0.30} the ratio
// whose u8 quantization of the values has the least squared error (the first on ties, so min/max
// unless clipping pays). At most 1 << 18 evenly spaced elements are scored.
std::pair<float, float> mse_range(const float* x, size_t n, float lo, float hi) {
  const size_t stride = std::max<size_t>(1, n >> 18);
  std::vector<float> sample;
  sample.reserve(n / stride + 1);
  for (size_t i = 0; i < n; i += stride) sample.push_back(x[i]);
  double best = u8_squared_error(sample.data(), sample.size(), lo, hi);
  float best_r = 1.0f;
  for (int k = 1; k <= 35; ++k) {
    const float r = 1.0f - 0.02f * static_cast<float>(k);
    const double e = u8_squared_error(sample.data(), sample.size(), r * lo, r * hi);
    if (e < best) best = e, best_r = r;
  }
  return {best_r * lo, best_r * hi};
}

}  // namespace

PlanQuantization calibrate_ranges(const Graph& graph, const std::vector<HostTensor>& values, const std::string& method) {
  const double q = quantile_of(method);
  PlanQuantization out;
  out.method = method;
  for (ValueId v : int8_sources(graph)) {
    const HostTensor& t = values.at(static_cast<size_t>(v));
    const float* x = reinterpret_cast<const float*>(t.bytes.data());
    const size_t n = t.bytes.size() / sizeof(float);
    if (n == 0) continue;
    float lo, hi;
    if (q >= 1.0) {
      const auto [mn, mx] = std::minmax_element(x, x + n);
      lo = *mn;
      hi = *mx;
      if (method == "mse" && std::isfinite(lo) && std::isfinite(hi)) std::tie(lo, hi) = mse_range(x, n, lo, hi);
    } else {
      std::vector<float> sorted(x, x + n);
      const size_t k_hi = std::min(n - 1, static_cast<size_t>(std::ceil(q * static_cast<double>(n - 1))));
      const size_t k_lo = n - 1 - k_hi;
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k_hi), sorted.end());
      hi = sorted[k_hi];
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k_lo), sorted.end());
      lo = sorted[k_lo];
    }
    if (!std::isfinite(lo) || !std::isfinite(hi)) continue;   // no int8 for a value that overflows
    out.ranges.push_back({graph.value(v).name, {lo, hi}});
  }
  return out;
}

namespace {

// `fn` (extracted from `graph`: its values keep the model's names) compiled by `backend` and run
// (1 compute thread) on `values`' tensors of its inputs; its outputs, in fn.outputs order.
std::vector<HostTensor> run_function(const Graph& graph, const Graph& fn, const std::vector<HostTensor>& values, const std::string& backend) {
  std::vector<ConstTensorView> in;
  for (ValueId v : fn.inputs) in.push_back(values.at(static_cast<size_t>(graph.find_value(fn.value(v).name))).view());
  std::vector<HostTensor> out;
  std::vector<TensorView> out_views;
  for (ValueId v : fn.outputs) out.emplace_back(fn.value(v).type);
  for (HostTensor& h : out) out_views.push_back(h.view());
  const ScopedComputeThreads one_thread(1);
  make_backend_compiler(backend)->compile(fn)->run(in, out_views);
  return out;
}

bool is_int8_anchor(const Graph& graph, const Node& node) {
  if (node.op != "Conv" && node.op != "MatMul" && node.op != "Gemm") return false;
  return !node.inputs.empty() && node.inputs[0] != kNoValue && graph.value(node.inputs[0]).range.has_value();
}

}  // namespace

double Int8CandidateErrors::anchor_error(const std::string& backend, NodeId n) {
  auto key = std::make_pair(backend, n);
  if (auto it = anchor_cache_.find(key); it != anchor_cache_.end()) return it->second;
  const double worst = is_int8_anchor(graph_, graph_.node(n)) ? downstream_error(backend, {static_cast<int>(n)}) : 0.0;
  anchor_cache_.emplace(std::move(key), worst);
  return worst;
}

double Int8CandidateErrors::downstream_error(const std::string& backend, const std::vector<int>& nodes) {
  double worst = 0.0;
  const auto n = static_cast<size_t>(*std::min_element(nodes.begin(), nodes.end()));
  std::vector<HostTensor> out;
  try {
    const DataflowIndex index(graph_);
    IndexSet inside(static_cast<int>(graph_.nodes.size()));
    for (int m : nodes) inside.insert(m);
    const Graph fn = extract_function(graph_, SubGraph(index, inside));
    out = run_function(graph_, fn, values_, backend);
    // Downstream of n, in topological order: ref on the changed values, the rest as ref had them.
    std::vector<HostTensor> changed(graph_.values.size());
    std::vector<char> is_changed(graph_.values.size(), 0);
    for (size_t i = 0; i < fn.outputs.size(); ++i) {
      const auto v = static_cast<size_t>(graph_.find_value(fn.value(fn.outputs[i]).name));
      changed[v] = std::move(out[i]);
      is_changed[v] = 1;
    }
    const KernelRegistry ref = make_ref_kernels();
    std::vector<ConstTensorView> ins;
    std::vector<TensorView> outs;
    for (size_t m = n + 1; m < graph_.nodes.size(); ++m) {
      if (std::binary_search(nodes.begin(), nodes.end(), static_cast<int>(m))) continue;   // inside: computed by fn
      const Node& d = graph_.nodes[m];
      bool reads_changed = false;
      for (ValueId v : d.inputs) reads_changed = reads_changed || (v != kNoValue && is_changed[static_cast<size_t>(v)]);
      if (!reads_changed) continue;
      ins.clear();
      outs.clear();
      for (ValueId v : d.inputs) {
        if (v == kNoValue) ins.push_back(ConstTensorView::missing());
        else ins.push_back(std::as_const(is_changed[static_cast<size_t>(v)] ? changed : values_)[static_cast<size_t>(v)].view());
      }
      for (ValueId v : d.outputs) {
        if (v == kNoValue) {
          outs.push_back(TensorView{});
          continue;
        }
        changed[static_cast<size_t>(v)] = HostTensor(graph_.value(v).type);
        outs.push_back(changed[static_cast<size_t>(v)].view());
      }
      ref.run(d, ins, outs);
      for (ValueId v : d.outputs)
        if (v != kNoValue) is_changed[static_cast<size_t>(v)] = 1;
    }
    for (ValueId o : graph_.outputs)
      if (is_changed[static_cast<size_t>(o)])
        worst = std::max(worst, relative_l2_error(changed[static_cast<size_t>(o)], values_.at(static_cast<size_t>(o))));
  } catch (const KernelUnsupported&) {   // declined in int8: it runs f32 inside its candidates
    worst = 0.0;
  } catch (const KernelError&) {         // fails in int8: no candidate holding it counts as within any budget
    worst = std::numeric_limits<double>::infinity();
  }
  return worst;
}

double Int8CandidateErrors::end_to_end_error(const SearchProblem& problem, int candidate) {
  const double local = error(problem, candidate);
  if (std::isinf(local)) return local;
  const Candidate& c = problem.candidates[static_cast<size_t>(candidate)];
  const std::vector<int> members = c.inside().members();
  double sum = 0.0;
  int anchors = 0;
  for (int n : members) {
    const double e = anchor_error(c.backend, static_cast<NodeId>(n));
    sum += e;
    anchors += e > 0.0 ? 1 : 0;
  }
  if (anchors < 2 || std::isinf(sum)) return sum;
  // Several int8 anchors: measured as one, the way the function runs them (u8 values between
  // its convolutions, onednn_int8_chain.h), once per (backend, node set).
  auto key = std::make_pair(c.backend, members);
  if (auto it = set_cache_.find(key); it != set_cache_.end()) return it->second;
  const double whole = downstream_error(c.backend, members);
  set_cache_.emplace(std::move(key), whole);
  return whole;
}

double Int8CandidateErrors::error(const SearchProblem& problem, int candidate) {
  const Candidate& c = problem.candidates[static_cast<size_t>(candidate)];
  auto key = std::make_pair(c.backend, c.inside().members());
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  double worst = std::numeric_limits<double>::infinity();
  try {
    const Graph fn = extract_function(graph_, c.sub_graph);
    const std::vector<HostTensor> out = run_function(graph_, fn, values_, c.backend);
    worst = 0.0;
    for (size_t i = 0; i < out.size(); ++i)
      worst = std::max(worst, relative_l2_error(out[i], values_.at(static_cast<size_t>(graph_.find_value(fn.value(fn.outputs[i]).name)))));
  } catch (const KernelUnsupported&) {
  } catch (const KernelError&) {
  }
  cache_.emplace(std::move(key), worst);
  return worst;
}

}  // namespace tessera
