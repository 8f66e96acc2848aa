// Codegen: a backend compiles its functions; each becomes an extern stub (TVM's
// MarkCompilerFunctionsAsExtern after BYOC codegen).
//
//   def @f(...) attrs {Compiler="onednn", Primitive=1, global_symbol="f"} { ... }
//   ->  extern def @f(...) attrs {Extern=1}          external_modules["f"] = onednn's artifact
//
// The stub keeps its signature and (for export and inspection only) its body; its attributes are
// exactly {Extern=1}; call sites in main are untouched, so later passes and a second partitioning
// round see plain calls to a function they must not touch. Stubs are never compiled again, which
// makes the pass idempotent and lets rounds for different backend sets compose.
// A function its backend cannot compile (KernelUnsupported) stays a normal function, lowered by
// the default path; the reason is reported through `skipped`, never swallowed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emit/module.h"

namespace tessera {

class BackendCompiler;

struct Codegen {
  std::string backend;
  // Compiles one function body; throws KernelUnsupported when the backend cannot take it.
  // `native_inputs[i]`: parameter i travels in the backend's boundary layout (boundary_layout.h):
  // some call site passes a computed value, not only graph inputs (plain: the function's own
  // kernels take them as they are) and not a model constant (weights stay plain).
  // `native_outputs[i]`: result i does, unless every call site makes it a graph output that no
  // other call reads.
  // `varying_inputs[i]`: some call site passes a value computed from the graph's inputs, whose
  // contents change from run to run behind the same pointer (BoundaryLayouts::varying_inputs).
  std::function<ExternalModule(const Graph& body, const std::vector<bool>& native_inputs,
                               const std::vector<bool>& native_outputs, const std::vector<bool>& varying_inputs)>
      compile;
};

// A Codegen backed by a real BackendCompiler (backend_compiler.h): the function compiled with its
// backend's native boundary layouts (native_boundary_layouts), which the artifact records.
Codegen compiler_codegen(std::shared_ptr<const BackendCompiler> compiler);

// `skipped`, if given, receives "symbol: reason" for each function left as it was.
Module codegen(const Module& module, const std::vector<Codegen>& codegens,
               std::vector<std::string>* skipped = nullptr);

}  // namespace tessera
