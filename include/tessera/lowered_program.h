// LoweredProgram: a LoweredFunction made runnable, the executor's inner loop.
//
// Lowering (lower.h) leaves every function, and main, as kernel calls over numbered buffers with
// a static memory plan. A LoweredProgram resolves that once, at build time, into steps that only
// move pointers at run time:
//
//   buffers   param   -> the caller's argument of this run (main: the model inputs)
//             output  -> the caller's result buffer        (main: the executor's outputs)
//             const   -> the body's constant data           (main: the model's weights)
//             workspace -> one aligned slab at the planner's offset, owned by the program
//   calls     "@sym" to an extern stub   -> the stub's CompiledFunction (external_modules[sym]); with
//                                            `instances` set, every call site after the first gets
//                                            its own compiled instance (see below)
//             "@sym" to a lowered function -> that function's own LoweredProgram (shared by every
//                                            call site; codegen left it, e.g. unsupported)
//             "ref.<Op>"                  -> the ref kernel of that node
//
// Anything else (a backend kernel name only a pass could produce, e.g. "tvm.softmax", or a fused
// composite kernel "byoc.conv_bias_relu") has no implementation on this machine and is a UserError
// at build time, naming the call, never a silent fallback.
//
// Instances per call site. A CompiledFunction is stateful: besides its intermediates it may cache
// weights reordered into its own layout, keyed by the weight pointer (backend_compiler.h). A
// function shared by several call sites (resnet18's blocks) sees a new pointer on every call; a
// backend that keeps one cached reorder per weight then reorders 9 MB of layer4 weights on every
// call, 3x slower than the isolated measurement the plan was priced with. Compiling one instance
// per call site (InstanceFactory) keeps every call's cache warm, at the price of compile time and
// one set of intermediates per call site. Sharing stays the default in the Module (one function,
// one artifact); instances are an executor decision.
//
// A program runs on one thread at a time (compiled functions and the workspace are stateful).
// After each step an optional observer sees the step's output buffers; --check compares them
// with the reference while they are still live in the shared workspace.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/backend_compiler.h"
#include "tessera/kernel.h"
#include "tessera/module.h"

namespace tessera {

// (the call, the names of its output buffers, the output views) after one step has run.
using StepObserver = std::function<void(const KernelCall& call, const std::vector<std::string>& names,
                                        std::span<const TensorView> outputs)>;

class LoweredProgram {
 public:
  // Programs of nested lowered functions, by symbol, shared by all call sites.
  using Library = std::map<std::string, std::unique_ptr<LoweredProgram>>;

  // `body` and `lowered` must outlive the program (they live in `module`). Throws UserError for
  // a call with no implementation here.
  // A fresh compiled instance of an extern stub (its backend and kept body); null = share.
  using InstanceFactory = std::function<std::unique_ptr<CompiledFunction>(const std::string& symbol)>;

  LoweredProgram(const Module& module, const Graph& body, const LoweredFunction& lowered,
                 const KernelRegistry& ref_kernels, Library& library, const InstanceFactory& instances = nullptr);
  ~LoweredProgram();

  // Params and outputs in buffer order of kind param / output (= body.inputs / body.outputs).
  void run(std::span<const ConstTensorView> params, std::span<const TensorView> outputs,
           const StepObserver* observer = nullptr);

  int64_t workspace_bytes() const { return workspace_bytes_; }
  size_t num_steps() const { return steps_.size(); }
  // Bytes owned by the per-call-site instances (intermediates, reordered weights).
  int64_t instance_bytes() const {
    int64_t n = 0;
    for (const auto& f : instances_) n += static_cast<int64_t>(f->workspace_bytes());
    return n;
  }

 private:
  struct Step {
    const KernelCall* call = nullptr;
    CompiledFunction* compiled = nullptr;   // extern stub
    LoweredProgram* nested = nullptr;       // lowered function
    const Node* node = nullptr;             // ref kernel
    const NodeKernel* kernel = nullptr;
    std::vector<std::string> output_names;
  };

  const LoweredFunction* lowered_;
  std::vector<std::unique_ptr<CompiledFunction>> instances_;   // per call site beyond the first
  std::vector<Step> steps_;
  std::vector<int> param_buffers_, output_buffers_;   // buffer indices, in order
  std::vector<void*> ptr_;                            // per buffer
  std::byte* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  std::vector<ConstTensorView> in_scratch_;
  std::vector<TensorView> out_scratch_;
};

}  // namespace tessera
