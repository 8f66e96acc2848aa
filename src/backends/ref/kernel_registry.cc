// KernelRegistry (see src/backends/kernel.h).
#include "backends/kernel.h"

namespace tessera {

void KernelRegistry::add(const std::string& op, NodeKernel kernel) {
  if (!kernel) throw KernelError(backend_ + ": empty kernel registered for " + op);
  if (!kernels_.emplace(op, std::move(kernel)).second)
    throw KernelError(backend_ + ": kernel for " + op + " registered twice");
}

const NodeKernel* KernelRegistry::find(std::string_view op) const {
  auto it = kernels_.find(op);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> out;
  out.reserve(kernels_.size());
  for (const auto& [op, k] : kernels_) out.push_back(op);
  return out;
}

void KernelRegistry::run(const Node& node, std::span<const ConstTensorView> inputs,
                         std::span<const TensorView> outputs) const {
  const NodeKernel* k = find(node.op);
  if (!k) throw KernelUnsupported(backend_ + ": no kernel for op " + node.op + " (node " + node.name + ")");
  (*k)(node, inputs, outputs);
}

}  // namespace tessera
