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
// Boundary layouts (boundary_layout.h). A compiled function may take and give its 4-D activations
// in NHWC (CompiledFunction::layouts()). The program knows the layout every buffer is written in
// (params, constants and ref kernels: plain; an extern call: its layouts) and, where a call wants
// another one, inserts a conversion step (layout_conversion(), compiled by kConversionBackend)
// into a side buffer of its own, once per (buffer, layout), right before the first call that
// wants it. An extern call that would write NHWC into one of main's outputs (the caller's plain
// buffer) writes a side buffer instead, converted into the output after it. Side buffers live
// outside the static memory plan (each is kept for the whole run): the price of converting only
// where two layouts meet.
//
// A program runs on one thread at a time (compiled functions and the workspace are stateful).
// After each step an optional observer sees the step's output buffers, always in plain layout
// (NHWC ones converted for it, unless it only times the steps); --check compares them with the
// reference while they are still live in the shared workspace. Conversion steps are observed
// too, as calls "layout.<from>-><to>" labelled with the converted value's name and no outputs.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/compilers/backend_compiler.h"
#include "ir/boundary_layout.h"
#include "backends/kernel.h"
#include "emit/module.h"

namespace tessera {

// After one step has run: (the call, the names of its output buffers, the output views).
struct StepObserver {
  std::function<void(const KernelCall& call, const std::vector<std::string>& names, std::span<const TensorView> outputs)>
      on_step;
  // false: the observer only times steps; outputs in NHWC are then handed over as they are
  // instead of being converted to plain first (which would add to the next step's time).
  bool reads_outputs = true;
};

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
    CompiledFunction* compiled = nullptr;   // extern stub, or a layout conversion
    LoweredProgram* nested = nullptr;       // lowered function
    const Node* node = nullptr;             // ref kernel
    const NodeKernel* kernel = nullptr;
    std::vector<std::string> output_names;
    std::vector<int> in_slots, out_slots;   // into ptr_ (-1: a missing optional input)
    std::vector<TensorType> in_types, out_types;   // as the callee takes them (physical for conversions)
    std::vector<int> observed_plain;        // per output: the slot its plain copy goes to for an observer, or -1
    // The callee's arguments, types filled in at build time; a run only writes their data
    // pointers (bind_views), so the loop allocates nothing (a TensorType holds its shape on the heap).
    std::vector<ConstTensorView> in_views;
    std::vector<TensorView> out_views;
  };
  // Points a step's views at this run's buffers.
  void bind_views(Step& step) const;
  // A new side buffer for a value of `type`: its slot in ptr_.
  int add_side(const TensorType& type);
  // The slot holding buffer slot `slot` in `layout`, adding a conversion step when it is new.
  int slot_in(int slot, Layout layout);
  void add_conversion(int from_slot, Layout from, int to_slot, Layout to);
  CompiledFunction* converter(const TensorType& type, Layout from, Layout to);
  void run_step(Step& step);

  const LoweredFunction* lowered_;
  std::vector<std::unique_ptr<CompiledFunction>> instances_;   // per call site beyond the first
  std::vector<Step> steps_;
  std::vector<int> param_buffers_, output_buffers_;   // buffer indices, in order
  std::vector<void*> ptr_;                            // per slot: the buffers, then side buffers
  std::vector<TensorType> slot_type_;                 // per slot: the logical type
  std::vector<Layout> slot_layout_;                   // per slot: the layout it is written in
  std::map<std::pair<int, Layout>, int> converted_;   // (slot, layout) -> the slot holding it so
  std::vector<std::unique_ptr<std::byte[], void (*)(std::byte*)>> sides_;
  std::map<std::tuple<DType, Shape, Layout, Layout>, std::unique_ptr<CompiledFunction>> converters_;
  std::unique_ptr<BackendCompiler> conversion_compiler_;
  std::vector<std::unique_ptr<KernelCall>> conversion_calls_;
  std::byte* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  std::vector<TensorView> observed_scratch_;   // an observer's plain copies of a step's outputs
};

}  // namespace tessera
