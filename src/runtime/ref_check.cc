// --check: compare a partitioned run with ref's interpretation of the whole model (see ref_check.h).
#include "runtime/ref_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "tessera/error.h"

namespace tessera {
namespace {

// Every element as double (exact for the integer sizes tessera's models use).
std::vector<double> as_doubles(const HostTensor& t) {
  std::vector<double> out(t.count());
  auto fill = [&](auto span) { for (size_t i = 0; i < span.size(); ++i) out[i] = static_cast<double>(span[i]); };
  switch (t.type.dtype) {
    case DType::f32: fill(t.as<float>()); break;
    case DType::f64: fill(t.as<double>()); break;
    case DType::i64: fill(t.as<int64_t>()); break;
    case DType::i32: fill(t.as<int32_t>()); break;
    case DType::i8: fill(t.as<int8_t>()); break;
    case DType::u8: case DType::boolean: fill(t.as<uint8_t>()); break;
    case DType::f16: for (size_t i = 0; i < out.size(); ++i) out[i] = half_to_float(t.as<uint16_t>()[i]); break;
    case DType::bf16: for (size_t i = 0; i < out.size(); ++i) out[i] = bfloat16_to_float(t.as<uint16_t>()[i]); break;
  }
  return out;
}

HostTensor from_view(const TensorView& v) {
  HostTensor t(v.type);
  if (!t.bytes.empty()) std::memcpy(t.bytes.data(), v.data, t.bytes.size());
  return t;
}

// The tolerance for a tensor whose computation passed through precision t: a half format is held
// to its own precision (header).
Tolerance for_dtype(const Tolerance& tol, DType t) {
  if (t != DType::f16 && t != DType::bf16) return tol;
  const double floor = 8.0 * (t == DType::f16 ? 0x1p-10 : 0x1p-7);
  return Tolerance{std::max(tol.rtol, floor), std::max(tol.atol, floor), tol.step};
}

// Coarser of two precisions: bf16 < f16 < anything else (which imposes no floor).
DType coarser(DType a, DType b) {
  if (a == DType::bf16 || b == DType::bf16) return DType::bf16;
  if (a == DType::f16 || b == DType::f16) return DType::f16;
  return DType::f32;
}

// For every value, the coarsest half format its computation passed through (f32 for none): what
// an f16 model computes is f16-accurate even after the Cast of its outputs to f32.
std::vector<DType> computed_precision(const Graph& g) {
  std::vector<DType> p(g.values.size(), DType::f32);
  for (size_t v = 0; v < g.values.size(); ++v) p[v] = coarser(DType::f32, g.values[v].type.dtype);
  for (const Node& n : g.nodes) {
    DType in = DType::f32;
    for (ValueId v : n.inputs)
      if (v != kNoValue) in = coarser(in, p[static_cast<size_t>(v)]);
    for (ValueId v : n.outputs)
      if (v != kNoValue) p[static_cast<size_t>(v)] = coarser(p[static_cast<size_t>(v)], in);
  }
  return p;
}

}  // namespace

TensorComparison compare_tensors(const HostTensor& actual, const HostTensor& reference, const Tolerance& given) {
  const Tolerance tol = for_dtype(given, actual.type.dtype);
  TensorComparison c;
  if (!(actual.type == reference.type)) {
    c.ok = false;
    c.max_abs_error = INFINITY;
    c.reason = "type " + to_string(actual.type) + " vs " + to_string(reference.type);
    return c;
  }
  c.rel_error = relative_l2_error(actual, reference);
  std::vector<double> a = as_doubles(actual), r = as_doubles(reference);
  const bool exact = !is_float(actual.type.dtype);
  double scale = 1.0;
  for (double x : r) if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
  auto allowed = [&](size_t i) {
    const double step = tol.step * (1.0 + 1e-6);   // the step itself, rounded in float
    return exact ? step : std::max(step, tol.atol * scale + tol.rtol * std::fabs(r[i]));
  };
  for (size_t i = 0; i < a.size(); ++i) {
    bool pass;
    double err;
    if (std::isnan(a[i]) || std::isnan(r[i])) {
      pass = std::isnan(a[i]) && std::isnan(r[i]);
      err = pass ? 0.0 : INFINITY;
    } else if (std::isinf(a[i]) || std::isinf(r[i])) {
      pass = a[i] == r[i];
      err = pass ? 0.0 : INFINITY;
    } else {
      err = std::fabs(a[i] - r[i]);
      pass = err <= allowed(i);
    }
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (!pass && c.ok) {
      c.ok = false;
      c.worst = static_cast<int64_t>(i);
      char buf[160];
      std::snprintf(buf, sizeof buf, "element %zu: %.9g vs ref %.9g (tolerance %.3g)", i, a[i], r[i],
                    allowed(i));
      c.reason = buf;
    }
  }
  return c;
}

std::vector<double> quantization_steps(const Graph& g) {
  std::vector<double> step(g.values.size(), 0.0);
  std::vector<int> quantizers(g.values.size(), 0);   // q of every value (nodes are in topological order)
  auto steps_of = [&](ValueId v) { return static_cast<double>(std::max(1, quantizers[static_cast<size_t>(v)] - 1)); };
  for (const Node& n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0] == kNoValue) continue;
    int q = 0;
    for (ValueId v : n.inputs)
      if (v != kNoValue) q = std::max(q, quantizers[static_cast<size_t>(v)]);
    const bool quantizes = n.op == "QuantizeLinear" || n.op.rfind("QLinear", 0) == 0;
    if (quantizes) ++q;
    for (ValueId v : n.outputs)
      if (v != kNoValue) quantizers[static_cast<size_t>(v)] = q;
    const ValueId out = n.outputs[0];
    if (quantizes && !is_float(g.value(out).type.dtype)) step[static_cast<size_t>(out)] = steps_of(out);
    if (n.op == "DequantizeLinear" && n.inputs.size() > 1) {
      const Value& s = g.value(n.inputs[1]);
      if (s.is_constant() && s.data && s.type.dtype == DType::f32 && s.type.numel() == 1) {
        float f;
        std::memcpy(&f, s.data->data(), sizeof f);
        step[static_cast<size_t>(out)] = std::fabs(f) * steps_of(out);
      }
    }
  }
  return step;
}

std::string CheckReport::first_failure() const {
  for (const auto* list : {&partitions, &outputs})
    for (const CheckedValue& v : *list)
      if (!v.result.ok) return (v.call.empty() ? "output " : "call " + v.call + ", value ") + v.name + ": " + v.result.reason;
  return "";
}

CheckReport check_against_ref(Executor& executor, const std::vector<HostTensor>& inputs, const Tolerance& tol) {
  const Graph& model = executor.model();
  std::map<ValueId, HostTensor> bindings;
  for (size_t i = 0; i < model.inputs.size() && i < inputs.size(); ++i) bindings[model.inputs[i]] = inputs[i];
  const KernelRegistry ref = make_ref_kernels();
  std::vector<HostTensor> expected;
  try {
    expected = interpret(model, ref, bindings);
  } catch (const KernelError& e) {   // the model's error, as in Executor (executor.cc)
    throw UserError(model.source, "", std::string("cannot run on ref: ") + e.what());
  }

  const std::vector<DType> precision = computed_precision(model);
  const std::vector<double> steps = quantization_steps(model);
  auto tolerance_of = [&](ValueId v) {
    Tolerance t = for_dtype(tol, precision[static_cast<size_t>(v)]);
    t.step = std::max(t.step, steps[static_cast<size_t>(v)]);
    return t;
  };
  std::unordered_map<std::string, ValueId> by_name;
  for (ValueId v = 0; v < static_cast<ValueId>(model.values.size()); ++v) by_name[model.value(v).name] = v;

  CheckReport report;
  StepObserver observer;
  observer.on_step = [&](const KernelCall& call, const std::vector<std::string>& names, std::span<const TensorView> outs) {
    for (size_t i = 0; i < names.size() && i < outs.size(); ++i) {
      auto it = by_name.find(names[i]);
      if (it == by_name.end() || !outs[i].data) continue;
      CheckedValue cv{names[i], call.kernel, compare_tensors(from_view(outs[i]), expected[static_cast<size_t>(it->second)], tolerance_of(it->second))};
      report.ok = report.ok && cv.result.ok;
      report.partitions.push_back(std::move(cv));
    }
  };
  const std::vector<HostTensor>& actual = executor.run(inputs, &observer);
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    ValueId v = model.outputs[i];
    CheckedValue cv{model.value(v).name, "", compare_tensors(actual[i], expected[static_cast<size_t>(v)], tolerance_of(v))};
    report.ok = report.ok && cv.result.ok;
    report.max_abs_error = std::max(report.max_abs_error, cv.result.max_abs_error);
    report.max_rel_error = std::max(report.max_rel_error, cv.result.rel_error);
    report.outputs.push_back(std::move(cv));
  }
  return report;
}

}  // namespace tessera
