// The emit pipeline, one straight function (Halide's Lower.cpp), and `--emit DIR`.
//
//   Plan ─outline─▶ Module ─backend passes─▶ ─codegen─▶ ─lower─▶ Module
//                     (reuse)   (per backend, declared)  (extern stubs)  (kernel calls, memory plan)
//
// Each step is a plain Module -> Module function from its own header; this file only orders them
// and, when EmitOptions::dump is set, hands over the module after every step that changed it
// (`tessera partition --emit DIR --dump-ir` style debugging, tests of the whole chain).
//
// write_emit_dir writes DIR/plan.json, module.txt, module.onnx, graph.dot and graph.svg, and for
// a plan with int8 partitions qdq.onnx and qdq_all.onnx (qdq_model.h: the plan, and the whole
// model, in int8 as QDQ ONNX; they need the weights' values, so `graph` carries them), each
// through a temporary file renamed into place only after every file was produced, so a failed
// run (say, Graphviz missing) leaves no partial or mixed output.
#pragma once

#include <string>
#include <vector>

#include "emit/backend_pipeline.h"
#include "emit/codegen.h"
#include "emit/lower.h"
#include "emit/module.h"
#include "tessera/plan.h"

namespace tessera {

struct EmitOptions {
  std::vector<BackendPipeline> pipelines;   // per-backend passes and dispatch tables
  std::vector<Codegen> codegens;            // backends whose functions become extern stubs
  int64_t alignment = 64;                   // workspace offsets
  DumpFn dump;                              // (step, module after it), for changed steps only
};

struct EmitResult {
  Module module;
  std::vector<std::string> notes;           // functions codegen left as they were, and why
};

EmitResult emit_module(const Graph& graph, const Plan& plan, const EmitOptions& options);

// The built-in declarations for the plan's backends, and a codegen for each that has a real
// compiler here (backend_compiler.h: ref, eigen, onednn, blas).
EmitOptions default_emit_options(const Plan& plan);

// `plan_json` is the plan file's text (plan_to_json_text), written as DIR/plan.json. Returns the
// paths written, in the order above, for the CLI's "wrote PATH" lines. qdq.onnx is written when
// the plan has an int8 partition, qdq_all.onnx when it records quantization ranges.
std::vector<std::string> write_emit_dir(const std::string& dir, const Graph& graph, const Plan& plan, const Module& module,
                    const std::string& plan_json);

}  // namespace tessera
