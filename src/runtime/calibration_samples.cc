// calibration_samples (calibration_samples.h).
#include "runtime/calibration_samples.h"

#include <cmath>
#include <cstring>

#include "tessera/error.h"

namespace tessera {

namespace {

// How many samples of input type `want` the tensor `t` stacks along axis 0 (0: none; 1: it is one).
int64_t samples_in(const HostTensor& t, const TensorType& want) {
  if (t.type == want) return 1;
  const Shape &s = t.type.shape, &w = want.shape;
  if (t.type.dtype != want.dtype || s.size() != w.size() || w.empty() || w[0] <= 0 || s[0] % w[0] != 0) return 0;
  for (size_t d = 1; d < s.size(); ++d)
    if (s[d] != w[d]) return 0;
  return s[0] / w[0];
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Standard-normal f32 contents from a splitmix64 stream (Box-Muller), the same numbers on every
// machine (<random>'s distributions differ between standard libraries).
HostTensor seeded_normal(const TensorType& type, uint64_t seed) {
  HostTensor t(type);
  uint64_t state = seed ^ 0x6E6F726D616C2121ull;   // a stream of its own, apart from HostTensor::random's
  auto uniform = [&] { return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53; };   // (0, 1)
  for (float& x : t.as<float>()) x = static_cast<float>(std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * M_PI * uniform()));
  return t;
}

}  // namespace

std::vector<std::map<std::string, HostTensor>> calibration_samples(const Graph& graph,
                                                                   const std::map<std::string, HostTensor>& calibration, uint64_t seed) {
  int64_t K = 1;
  std::string first;   // the input that set K
  std::map<std::string, int64_t> per_input;
  for (const auto& [name, t] : calibration) {
    const ValueId v = graph.find_value(name);
    if (v == kNoValue || graph.value(v).kind != ValueKind::Input) continue;
    const int64_t k = samples_in(t, graph.value(v).type);
    if (k <= 1) continue;
    if (!first.empty() && k != K)
      throw UserError::option("calibration", name,
                              "holds " + std::to_string(k) + " samples along axis 0, input '" + first + "' " + std::to_string(K));
    K = k;
    first = name;
    per_input[name] = k;
  }
  bool seeded = false;
  if (K == 1)   // an input seeded random: several seeded samples
    for (ValueId in : graph.inputs)
      if (!calibration.count(graph.value(in).name)) seeded = true;
  if (seeded) K = kSeededSamples;
  std::vector<std::map<std::string, HostTensor>> out(static_cast<size_t>(K));
  // Seeded samples of both scales: the odd ones' f32 inputs standard normal (the even ones are
  // model_inputs' uniform [-1, 1), filled in by whoever runs them).
  for (int64_t k = 1; seeded && k < K; k += 2)
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      const Value& in = graph.value(graph.inputs[i]);
      if (!calibration.count(in.name) && in.type.dtype == DType::f32)
        out[static_cast<size_t>(k)].emplace(in.name, seeded_normal(in.type, (seed + static_cast<uint64_t>(k)) * 1000003ull + i));
    }
  for (const auto& [name, t] : calibration) {
    if (!per_input.count(name)) {   // one sample (or a mismatch model_inputs reports): the same in every sample
      for (auto& sample : out) sample.emplace(name, t);
      continue;
    }
    const TensorType& want = graph.value(graph.find_value(name)).type;
    const size_t bytes = want.bytes();
    for (int64_t k = 0; k < K; ++k) {
      HostTensor part(want);
      std::memcpy(part.bytes.data(), t.bytes.data() + static_cast<size_t>(k) * bytes, bytes);
      out[static_cast<size_t>(k)].emplace(name, std::move(part));
    }
  }
  return out;
}

}  // namespace tessera
