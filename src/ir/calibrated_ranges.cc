// with_calibrated_ranges (calibrated_ranges.h).
#include "ir/calibrated_ranges.h"

#include <unordered_map>

#include "tessera/error.h"

namespace tessera {

Graph with_calibrated_ranges(const Graph& graph, const CalibratedRanges& ranges) {
  Graph out = graph;
  if (ranges.empty()) return out;
  std::unordered_map<std::string, ValueId> by_name;
  for (size_t v = 0; v < out.values.size(); ++v) by_name.emplace(out.values[v].name, static_cast<ValueId>(v));
  for (const auto& [name, range] : ranges) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) throw UserError(graph.source, name, "a calibrated range names no value of the model");
    out.value(it->second).range = range;
  }
  return out;
}

Graph with_calibrated_ranges(const Graph& graph, const PlanQuantization& quantization) {
  Graph out = with_calibrated_ranges(graph, quantization.ranges);
  for (const auto& [name, shift] : quantization.bias_shifts) {
    const ValueId v = out.find_value(name);
    if (v == kNoValue) throw UserError(graph.source, name, "an int8 bias shift names no value of the model");
    out.value(v).int8_bias_shift = shift;
  }
  return out;
}

}  // namespace tessera
