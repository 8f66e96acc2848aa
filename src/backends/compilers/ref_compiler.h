// The `ref` backend's compiler: the function's nodes, each bound to its ref kernel at compile time.
//
//   compile: for node in fn.nodes: kernel = ref_registry.find(node.op) or KernelUnsupported;
//            materialize its outputs
//   run:     bind buffers; for step in steps: kernel(node, input views, output views)
//
// No fusion and no layout changes: ref is the oracle the other compilers are checked against, so
// its compiled function computes exactly what the node-by-node interpreter does.
#pragma once

#include <memory>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

std::unique_ptr<BackendCompiler> make_ref_compiler();

}  // namespace tessera
