// Runs one ref kernel on host tensors, for the kernel tests: a node of `op` with `attrs`, the
// inputs as given, one fresh output tensor per type in `outputs`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backends/ref/ref_kernels.h"

namespace tessera::testing {

inline const KernelRegistry& ref_kernel_registry() {
  static const KernelRegistry r = make_ref_kernels();
  return r;
}

inline std::vector<HostTensor> run_ref_kernel(const std::string& op, Attributes attrs, const std::vector<HostTensor>& inputs,
                                              const std::vector<TensorType>& outputs) {
  Node n;
  n.name = op + "_0";
  n.op = op;
  n.attrs = std::move(attrs);
  std::vector<ConstTensorView> ins;
  for (const auto& t : inputs) ins.push_back(t.view());
  std::vector<HostTensor> ys;
  for (const auto& t : outputs) ys.emplace_back(t);
  std::vector<TensorView> outs;
  for (auto& y : ys) outs.push_back(y.view());
  ref_kernel_registry().run(n, ins, outs);
  return ys;
}

}  // namespace tessera::testing
