// Seeded weights and inputs for running a model (see model_data.h).
#include "runtime/model_data.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

#include "tessera/error.h"
#include "ir/structural_hash.h"

namespace tessera {
namespace {

// FNV-1a of the name: a seed that depends on the value, not on its position in the graph.
uint64_t name_seed(uint64_t seed, const std::string& name) { return fnv1a64(name, 1469598103934665603ull ^ seed); }

HostTensor seeded_weight(const TensorType& type, uint64_t seed) {
  HostTensor t = HostTensor::random(type, seed);
  if (type.dtype != DType::f32 || type.rank() < 2 || type.shape[0] <= 0) return t;
  const double fan_in = static_cast<double>(type.numel()) / static_cast<double>(type.shape[0]);
  const float scale = static_cast<float>(1.0 / std::sqrt(std::max(1.0, fan_in)));
  for (float& x : t.as<float>()) x *= scale;
  return t;
}

// The constant a one-element integer input is compared with by an Equal node, if any.
std::optional<HostTensor> compared_constant(const Graph& g, ValueId input) {
  const Value& in = g.value(input);
  if (in.type.numel() != 1 || is_float(in.type.dtype)) return std::nullopt;
  for (const Node& n : g.nodes) {
    if (n.op != "Equal" || !n.domain.empty() || n.inputs.size() != 2) continue;
    for (int k = 0; k < 2; ++k) {
      if (n.inputs[k] != input || n.inputs[1 - k] == kNoValue) continue;
      const Value& c = g.value(n.inputs[1 - k]);
      if (c.is_constant() && c.data && c.type == in.type) return HostTensor::from_tensor(Tensor{c.type, c.data});
    }
  }
  return std::nullopt;
}

}  // namespace

Graph with_seeded_weights(const Graph& graph, uint64_t seed, int* filled) {
  Graph out = graph;
  int n = 0;
  for (Value& v : out.values) {
    if (!v.is_constant() || v.data || !is_float(v.type.dtype)) continue;
    HostTensor t = seeded_weight(v.type, name_seed(seed, v.name));
    auto bytes = std::make_shared<TensorBytes>(t.bytes.size());
    if (!t.bytes.empty()) std::memcpy(bytes->data(), t.bytes.data(), t.bytes.size());
    v.data = std::move(bytes);
    ++n;
  }
  if (filled) *filled = n;
  return out;
}

std::vector<HostTensor> model_inputs(const Graph& graph, uint64_t seed,
                                     const std::map<std::string, HostTensor>& given) {
  std::set<std::string> names;
  std::vector<HostTensor> out;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs[i]);
    names.insert(v.name);
    auto it = given.find(v.name);
    if (it == given.end()) {
      std::optional<HostTensor> tested = compared_constant(graph, graph.inputs[i]);
      out.push_back(tested ? *tested : HostTensor::random(v.type, seed * 1000003ull + i));
      continue;
    }
    if (!(it->second.type == v.type))
      throw UserError::option("input", v.name, "has type " + to_string(it->second.type) + ", the model expects " +
                                             to_string(v.type));
    out.push_back(it->second);
  }
  for (const auto& [name, t] : given)
    if (!names.count(name)) {
      std::string known;
      for (ValueId in : graph.inputs) known += (known.empty() ? "" : ", ") + graph.value(in).name;
      throw UserError::option("input", name, "the model has no input of that name (its inputs: " + known + ")");
    }
  return out;
}

}  // namespace tessera
