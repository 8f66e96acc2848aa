// calibration_samples (calibration_samples.h).
#include "runtime/calibration_samples.h"

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

}  // namespace

std::vector<std::map<std::string, HostTensor>> calibration_samples(const Graph& graph,
                                                                   const std::map<std::string, HostTensor>& calibration) {
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
  if (K == 1)   // an input seeded random: several seeded samples
    for (ValueId in : graph.inputs)
      if (!calibration.count(graph.value(in).name)) K = kSeededSamples;
  std::vector<std::map<std::string, HostTensor>> out(static_cast<size_t>(K));
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
