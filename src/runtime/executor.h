// Executor: runs a partitioned model end to end, compiled once, run many times.
//
// It is emit's pipeline (emit_pipeline.h, with default_emit_options: every backend of the plan
// with a real compiler here gets codegen) followed by a loop over main:
//
//   (Graph, Plan) ─▶ with_seeded_weights        data-less weights get seeded values (model_data.h)
//                 ─▶ outline                     partitions -> functions, equal ones shared
//                 ─▶ run_backend_passes          each backend's own passes on its own functions
//                 ─▶ codegen                     each function compiled by its partition's
//                                                BackendCompiler -> extern stub + artifact
//                 ─▶ lower                       main -> calls "@sym" over buffers, static plan
//                 ─▶ LoweredProgram(main)        pointers resolved once
//   run(inputs)   ─▶ for call in main: artifact.run(args, results)   (one workspace, no allocation)
//
// Each call passes its own weights (main's constants), so resnet18's shared block function runs
// with every block's weights. Outputs are owned by the executor and overwritten by each run.
//
// What is not needed for correctness: the per-backend passes (the built-in CPU compilers take
// NCHW functions as they are); they run because a backend may declare them. A function a
// backend's compiler rejects (KernelUnsupported) stays lowered and runs on ref kernels; that is
// reported in codegen_skipped() and printed by `tessera run`, never silent.
//
// Scale: compile time is dominated by the backends' compilers (oneDNN primitive creation); a
// run's overhead outside kernels is a few pointer writes per call, and no allocation: every
// view a call takes is built with its type at compile time and only its data pointer is set per
// run (a TensorType's shape lives on the heap, so building views per run would allocate per call).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/compilers/backend_compiler.h"
#include "emit/backend_pipeline.h"
#include "tessera/graph.h"
#include "tessera/host_tensor.h"
#include "runtime/lowered_program.h"
#include "emit/module.h"
#include "tessera/plan.h"

namespace tessera {

struct ExecutorOptions {
  uint64_t seed = 0;   // for weights the model lacks
  // Called after each emit step that changed the module, with the step's name and the module
  // after it (emit_pipeline.h); null = no dumps.
  DumpFn dump;
  // One compiled instance per call site of a shared extern function (lowered_program.h explains
  // why); false = every call site runs the module's one artifact.
  bool instance_per_call = true;
};

class Executor {
 public:
  // Builds and compiles everything. Throws UserError (unknown backend, a call with no
  // implementation) and whatever a backend's compile throws besides KernelUnsupported.
  Executor(const Graph& graph, const Plan& plan, const ExecutorOptions& options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // One run; inputs in model().inputs order, with exactly their types. Returns outputs().
  const std::vector<HostTensor>& run(std::span<const HostTensor> inputs, const StepObserver* observer = nullptr);
  const std::vector<HostTensor>& outputs() const { return outputs_; }
  // One run on caller-owned buffers (session.h): inputs and outputs in model order with exactly
  // their types (UserError naming the tensor otherwise); outputs are written in place.
  void run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs);

  // The model as run: the input graph with seeded weights filled in (the --check oracle runs this).
  const Graph& model() const { return model_; }
  const Module& module() const { return *module_; }
  // "symbol: reason" per function its backend could not compile (run on ref kernels instead).
  const std::vector<std::string>& codegen_skipped() const { return skipped_; }
  int64_t workspace_bytes() const;
  double compile_ms() const { return compile_ms_; }

 private:
  Graph model_;
  std::unique_ptr<Module> module_;
  std::unique_ptr<KernelRegistry> ref_kernels_;
  std::map<std::string, std::unique_ptr<BackendCompiler>> compilers_;   // for per-call instances
  LoweredProgram::Library library_;
  std::unique_ptr<LoweredProgram> main_;
  std::vector<HostTensor> outputs_;
  // run(HostTensors)'s views of the inputs (types set here, data per run) and of outputs_, built
  // once so that a run allocates nothing outside its kernels.
  std::vector<ConstTensorView> in_views_;
  std::vector<TensorView> out_views_;
  std::vector<std::string> skipped_;
  double compile_ms_ = 0.0;
};

}  // namespace tessera
