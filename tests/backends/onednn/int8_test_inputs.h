// Test helper for the int8 variant's tests: seeded random inputs of a graph, and ref's outputs on
// them (the fp32 values an int8 function's error is measured against, and calibration reads); a
// compiled function's output on inputs; MobileNet's conv unit for the graphs they build.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/compilers/function_builder.h"
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

// g's first output as `f` (a CompiledFunction or an OnednnProgram) computes it from `in`.
template <typename Function>
HostTensor run_function(Function& f, const Graph& g, const std::vector<HostTensor>& in) {
  HostTensor out(g.value(g.outputs[0]).type);
  std::vector<ConstTensorView> views;
  for (const HostTensor& t : in) views.push_back(t.view());
  std::vector<TensorView> outs{out.view()};
  f.run(views, outs);
  return out;
}

// MobileNet's unit: Conv (kernel k, stride, groups; weights and bias the inputs "w<n>", "b<n>";
// padding k / 2) to a square hw x hw map, then ReLU6 (Clip to [0, 6]) where asked.
struct MobileNetConv {
  FunctionBuilder& b;
  ValueId lo = b.scalar("lo", 0.0f), hi = b.scalar("hi", 6.0f);
  ValueId operator()(ValueId in, int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t group, int64_t hw, bool relu6,
                     const std::string& n) {
    using I = std::vector<int64_t>;
    const ValueId w = b.input("w" + n, {cout, cin / group, k, k}), bias = b.input("b" + n, {cout});
    const int64_t p = k / 2;
    ValueId y = b.node("Conv", {in, w, bias}, {1, cout, hw, hw},
                       {{"pads", I{p, p, p, p}}, {"strides", I{stride, stride}}, {"group", group}, {"kernel_shape", I{k, k}}});
    return relu6 ? b.node("Clip", {y, lo, hi}, {1, cout, hw, hw}) : y;
  }
};

}  // namespace tessera::testing
