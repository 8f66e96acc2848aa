// The node-by-node interpreter: runs a whole Graph with one KernelRegistry, in the Graph's
// topological order, every value in its own HostTensor.
//
//   bindings {graph inputs, data-less constants} ─▶ for node in g.nodes: kernel(node, ins, outs)
//                                                  ─▶ one HostTensor per ValueId
//
// It is the simplest correct executor: no memory plan, no partitions, no threads. The ONNX node
// test oracle runs ref through it, and `tessera run --check` can use it to compute ref's value of
// every node. Output buffers are sized from the Graph's value types (destination-passing), so
// the importer's shape inference is exercised too.
#pragma once

#include <map>
#include <vector>

#include "tessera/graph.h"
#include "backends/kernel.h"

namespace tessera {

// Every value of `g` after running all nodes: result[v] for ValueId v. `bindings` supplies the
// graph inputs and any constant without data (the caller's seeded random weights); a binding
// for a constant with data overrides it. Throws KernelError when a needed value is unbound or
// a binding's type differs from the value's, and whatever the kernels throw (KernelUnsupported
// for a node the registry cannot run, naming the node).
std::vector<HostTensor> interpret(const Graph& g, const KernelRegistry& kernels,
                                  const std::map<ValueId, HostTensor>& bindings);

}  // namespace tessera
