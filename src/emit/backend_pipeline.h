// Per-backend passes: what a backend declares for *its own* functions, and the pass that runs them.
//
//   BackendPipeline tvm:  passes [convert_layout, fold_constants],
//                         dispatch {Softmax -> tvm.softmax, LayerNormalization -> tvm.layer_norm}
//   run_backend_passes(m, {tvm, onednn}):  tvm's passes see only Compiler="tvm" functions (and the
//   call sites of those in main, for folding); onednn's functions, extern stubs and main's own
//   ops are untouched.
//
// A BackendPass is a plain function (Module, backend) -> Module that must touch only that
// backend's functions; the backend name is an argument so one pass serves every backend that
// asks for it. Passes run backend by backend in the order given, each backend's in its declared
// order. The dispatch table is used later, by lowering (lower.h), not here.
//
// The built-in declarations (builtin_pipeline) are compiled in, not part of the tessera.backend
// spec format: that format is a frozen contract whose parser rejects unknown fields. A
// declarative backend gets an empty pipeline (no passes, default dispatch).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "emit/dispatch.h"
#include "emit/module.h"

namespace tessera {

struct BackendPass {
  std::string name;   // "convert_layout", shown in IR dumps
  std::function<Module(const Module&, const std::string& backend)> run;
};

struct BackendPipeline {
  std::string backend;
  std::vector<BackendPass> passes;
  Dispatch dispatch;
};

BackendPass convert_layout_pass();
BackendPass fold_constants_pass();

// The declaration of a built-in backend (tvm: NHWC layout + folding + Softmax/LayerNorm
// overrides; byoc: fused kernels for its composites; others: empty).
BackendPipeline builtin_pipeline(const std::string& backend);

// Called after each pass that changed the module: (backend, pass name, module after).
using DumpFn = std::function<void(const std::string& step, const Module& after)>;

Module run_backend_passes(const Module& module, const std::vector<BackendPipeline>& pipelines,
                          const DumpFn& dump = nullptr);

}  // namespace tessera
