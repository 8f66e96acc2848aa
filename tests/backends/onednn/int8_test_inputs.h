// Test helper for the int8 variant's tests: seeded random inputs of a graph, and ref's outputs on
// them (the fp32 values an int8 function's error is measured against, and calibration reads).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "tessera/graph.h"
#include "tessera/host_tensor.h"

namespace tessera::testing {

// One seeded random tensor per graph input, input i from seed + i.
inline std::vector<HostTensor> inputs_of(const Graph& g, uint64_t seed) {
  std::vector<HostTensor> in;
  for (size_t i = 0; i < g.inputs.size(); ++i) in.push_back(HostTensor::random(g.value(g.inputs[i]).type, seed + i));
  return in;
}

// g's outputs as ref computes them from `in`.
inline std::vector<HostTensor> ref_values(const Graph& g, const std::vector<HostTensor>& in) {
  std::map<ValueId, HostTensor> bindings;
  for (size_t i = 0; i < g.inputs.size(); ++i) bindings[g.inputs[i]] = in[i];
  return interpret(g, make_ref_kernels(), bindings);
}

}  // namespace tessera::testing
