// The plan's "accuracy" and "quantization" sections (src/search/plan_json_precision.h).
#include "search/plan_json_precision.h"

#include <cmath>

#include "tessera/error.h"

namespace tessera {

using plan_json::field;
using plan_json::read_string;

namespace {

std::string quote_text(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

void write_plan_precision(std::ostream& o, const Plan& plan) {
  if (const auto& a = plan.accuracy)
    o << ",\n \"accuracy\": {\"max_rel_error\": " << format_plan_number(a->max_rel_error)
      << ", \"calibration\": " << quote_text(a->calibration) << ", \"verified_error\": " << format_plan_number(a->verified_error)
      << ", \"proxy_error\": " << format_plan_number(a->proxy_error) << ", \"rounds\": " << a->rounds;
  if (const auto& a = plan.accuracy; a && a->samples > 0) {
    o << ", \"samples\": " << a->samples << ", \"sample_errors\": [";
    for (size_t i = 0; i < a->sample_errors.size(); ++i) o << (i ? ", " : "") << format_plan_number(a->sample_errors[i]);
    o << "], \"bound\": " << quote_text(a->bound);
  }
  if (const auto& a = plan.accuracy; a && !a->fallback.empty()) o << ",\n  \"fallback\": " << quote_text(a->fallback);
  if (const auto& a = plan.accuracy; a && !a->stayed_fp32.empty()) {
    o << ", \"stayed_fp32\": [";
    for (size_t i = 0; i < a->stayed_fp32.size(); ++i)
      o << (i ? ",\n    " : "\n    ") << "[" << quote_text(a->stayed_fp32[i].first) << ", " << quote_text(a->stayed_fp32[i].second) << "]";
    o << "]";
  }
  if (plan.accuracy) o << "}";
  if (const auto& q = plan.quantization) {
    o << ",\n \"quantization\": {\"method\": " << quote_text(q->method) << ", \"ranges\": [";
    for (size_t i = 0; i < q->ranges.size(); ++i)
      o << (i ? ",\n    " : "\n    ") << "[" << quote_text(q->ranges[i].first) << ", " << format_plan_number(q->ranges[i].second.first) << ", "
        << format_plan_number(q->ranges[i].second.second) << "]";
    o << "]";
    if (!q->bias_shifts.empty()) {
      o << ",\n  \"bias_shifts\": [";
      for (size_t i = 0; i < q->bias_shifts.size(); ++i) {
        o << (i ? ",\n    " : "\n    ") << "[" << quote_text(q->bias_shifts[i].first) << ", [";
        for (size_t c = 0; c < q->bias_shifts[i].second.size(); ++c) o << (c ? ", " : "") << format_plan_number(q->bias_shifts[i].second[c]);
        o << "]]";
      }
      o << "]";
    }
    o << "}";
  }
}

PlanAccuracy read_plan_accuracy(const nlohmann::json& a, const std::string& file) {
  auto number = [&](const char* k) {
    const auto& v = field(a, k, file, "accuracy");
    if (!v.is_number() || !(v.get<double>() >= 0)) throw UserError(file, std::string("accuracy.") + k, "expected a non-negative number");
    return v.get<double>();
  };
  PlanAccuracy acc;
  acc.max_rel_error = number("max_rel_error");
  acc.calibration = read_string(a, "calibration", file, "accuracy");
  acc.verified_error = number("verified_error");
  acc.proxy_error = number("proxy_error");
  acc.rounds = static_cast<int64_t>(number("rounds"));
  if (a.contains("samples")) {   // absent from plans written before it was recorded
    const auto& k = a["samples"];
    if (!k.is_number_integer() || k.get<int64_t>() < 1) throw UserError(file, "accuracy.samples", "expected a positive integer");
    acc.samples = k.get<int64_t>();
    const auto& errors = field(a, "sample_errors", file, "accuracy");
    if (!errors.is_array() || errors.size() != static_cast<size_t>(acc.samples))
      throw UserError(file, "accuracy.sample_errors", "expected an array of " + std::to_string(acc.samples) + " numbers (one per sample)");
    for (size_t i = 0; i < errors.size(); ++i) {
      if (!errors[i].is_number() || !(errors[i].get<double>() >= 0))
        throw UserError(file, "accuracy.sample_errors[" + std::to_string(i) + "]", "expected a non-negative number");
      acc.sample_errors.push_back(errors[i].get<double>());
    }
    acc.bound = read_string(a, "bound", file, "accuracy");
  }
  if (a.contains("fallback")) acc.fallback = read_string(a, "fallback", file, "accuracy");
  if (a.contains("stayed_fp32")) {
    const auto& list = a["stayed_fp32"];
    if (!list.is_array()) throw UserError(file, "accuracy.stayed_fp32", "expected an array");
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_array() || list[i].size() != 2 || !list[i][0].is_string() || !list[i][1].is_string())
        throw UserError(file, "accuracy.stayed_fp32[" + std::to_string(i) + "]", "expected [node name, why]");
      acc.stayed_fp32.push_back({list[i][0].get<std::string>(), list[i][1].get<std::string>()});
    }
  }
  return acc;
}

// Ranges are written with 10 significant digits, so each float reads back exactly.
PlanQuantization read_plan_quantization(const nlohmann::json& q, const std::string& file, const Graph& graph) {
  PlanQuantization out;
  out.method = read_string(q, "method", file, "quantization");
  const auto& ranges = field(q, "ranges", file, "quantization");
  if (!ranges.is_array()) throw UserError(file, "quantization.ranges", "expected an array");
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& r = ranges[i];
    const std::string at = "quantization.ranges[" + std::to_string(i) + "]";
    if (!r.is_array() || r.size() != 3 || !r[0].is_string() || !r[1].is_number() || !r[2].is_number())
      throw UserError(file, at, "expected [value name, min, max]");
    const double lo = r[1].get<double>(), hi = r[2].get<double>();
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) throw UserError(file, at, "expected finite min <= max");
    if (graph.find_value(r[0].get<std::string>()) == kNoValue)
      throw UserError(file, at, "no value named '" + r[0].get<std::string>() + "' in the model");
    out.ranges.push_back({r[0].get<std::string>(), {static_cast<float>(lo), static_cast<float>(hi)}});
  }
  if (!q.contains("bias_shifts")) return out;
  const auto& shifts = q["bias_shifts"];
  if (!shifts.is_array()) throw UserError(file, "quantization.bias_shifts", "expected an array");
  for (size_t i = 0; i < shifts.size(); ++i) {
    const auto& s = shifts[i];
    const std::string at = "quantization.bias_shifts[" + std::to_string(i) + "]";
    if (!s.is_array() || s.size() != 2 || !s[0].is_string() || !s[1].is_array() || s[1].empty())
      throw UserError(file, at, "expected [value name, [shift per channel, ...]]");
    const ValueId v = graph.find_value(s[0].get<std::string>());
    if (v == kNoValue) throw UserError(file, at, "no value named '" + s[0].get<std::string>() + "' in the model");
    std::vector<float> per_channel;
    for (const auto& x : s[1]) {
      if (!x.is_number() || !std::isfinite(x.get<double>())) throw UserError(file, at, "expected finite numbers");
      per_channel.push_back(static_cast<float>(x.get<double>()));
    }
    out.bias_shifts.push_back({s[0].get<std::string>(), std::move(per_channel)});
  }
  return out;
}

}  // namespace tessera
