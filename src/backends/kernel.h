// The kernel interface: how one node runs on one backend, over caller-owned buffers.
//
// A kernel is a function of (node, input views, output views). It reads the node's attributes and
// its inputs and writes every output in place; it never allocates an output (destination-passing).
// The caller sizes each output from the Graph's inferred value type, so shape inference happens
// once, at import, and a kernel only checks that the shapes it is given are the ones it would
// produce:
//
//   Graph  ──types──▶ caller allocates outputs ──▶ kernel(node, {x, w}, {y}) ──▶ y filled
//
// Views are non-owning (a TensorType plus a pointer), cheap to copy, and say nothing about who
// owns the memory: a HostTensor in tests, a slab of the static memory plan in the executor. A
// missing optional input (kNoValue in the Graph) is passed as ConstTensorView::missing(); a
// present zero-element tensor may have a null pointer, so presence is a flag, not the pointer.
// An omitted optional output (MaxPool's Indices, say) is a TensorView with null data, or is left
// off the end of the span; a kernel writes only the outputs it is given.
//
// A KernelRegistry maps an op type to its kernel for one backend. Backends fill one registry each
// (ref: make_ref_kernels() in src/backends/ref/ref_kernels.h) and look kernels up per node; a
// backend that lacks an op simply has no entry (no fallback to another backend's kernels).
//
// Failures: a kernel throws KernelUnsupported when the node uses a feature this kernel does not
// implement (a dtype, an attribute value such as Resize's cubic mode): the node is valid ONNX but
// not this backend's, so a measured cost becomes Invalid with that reason. Any other exception
// from a kernel (KernelError: shapes that disagree with the node) is a bug in the caller or in
// the kernel. Kernels are re-entrant: they keep no state between calls.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/graph.h"
#include "tessera/host_tensor.h"
#include "tessera/tensor_type.h"

namespace tessera {

// One node's kernel. Inputs follow node.inputs (missing ones as ConstTensorView::missing());
// outputs follow node.outputs and are already allocated with their inferred types.
using NodeKernel = std::function<void(const Node& node, std::span<const ConstTensorView> inputs,
                                      std::span<const TensorView> outputs)>;

// The node uses a feature this kernel does not implement (dtype, attribute value, ...).
class KernelUnsupported : public std::runtime_error {
 public:
  explicit KernelUnsupported(const std::string& what) : std::runtime_error(what) {}
};

// Inputs or outputs disagree with the node (wrong count, shape, dtype): a bug, not a user error.
class KernelError : public std::runtime_error {
 public:
  explicit KernelError(const std::string& what) : std::runtime_error(what) {}
};

// op type -> kernel, for one backend. Registration order does not matter; ops() is sorted.
class KernelRegistry {
 public:
  explicit KernelRegistry(std::string backend) : backend_(std::move(backend)) {}

  // Registers `kernel` for `op`; registering one op twice is a bug (KernelError).
  void add(const std::string& op, NodeKernel kernel);
  // The kernel for `op`, or nullptr when this backend has none.
  const NodeKernel* find(std::string_view op) const;
  bool supports(std::string_view op) const { return find(op) != nullptr; }
  std::vector<std::string> ops() const;
  const std::string& backend() const { return backend_; }

  // Runs `node` with its registered kernel; throws KernelUnsupported when there is none.
  void run(const Node& node, std::span<const ConstTensorView> inputs,
           std::span<const TensorView> outputs) const;

 private:
  std::string backend_;
  std::map<std::string, NodeKernel, std::less<>> kernels_;
};

}  // namespace tessera
