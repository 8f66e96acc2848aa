// The ref compiler (see ref_compiler.h).
#include "backends/compilers/ref_compiler.h"

#include <string>
#include <vector>

#include "backends/compilers/backend_registration.h"
#include "backends/compilers/function_frame.h"
#include "backends/ref/ref_kernels.h"

namespace tessera {
namespace {

const KernelRegistry& ref_registry() {
  static const KernelRegistry registry = make_ref_kernels();  // immutable once built
  return registry;
}

class RefFunction final : public CompiledFunction {
 public:
  explicit RefFunction(const Graph& fn) : CompiledFunction(fn), fn_(fn), frame_(fn_) {
    for (const Node& node : fn_.nodes) {
      const NodeKernel* kernel = ref_registry().find(node.op);
      if (!kernel) throw KernelUnsupported("ref: node '" + node.name + "': no kernel for op " + node.op);
      for (ValueId v : node.outputs) frame_.materialize(v);
      // Views with their types, built once; a run sets their data pointers only.
      steps_.push_back({kernel, {}, {}});
      for (ValueId v : node.inputs) steps_.back().ins.push_back(frame_.cview(v));
      for (ValueId v : node.outputs) steps_.back().outs.push_back(frame_.view(v));
    }
  }
  size_t workspace_bytes() const override { return frame_.owned_bytes(); }

 protected:
  void run_impl(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) override {
    frame_.bind(inputs, outputs);
    for (size_t s = 0; s < steps_.size(); ++s) {
      const Node& node = fn_.nodes[s];
      Step& step = steps_[s];
      for (size_t i = 0; i < node.inputs.size(); ++i) step.ins[i].data = frame_.data(node.inputs[i]);
      for (size_t i = 0; i < node.outputs.size(); ++i) step.outs[i].data = frame_.data(node.outputs[i]);
      (*step.kernel)(node, step.ins, step.outs);
    }
  }

 private:
  struct Step {
    const NodeKernel* kernel;
    std::vector<ConstTensorView> ins;
    std::vector<TensorView> outs;
  };
  Graph fn_;              // a copy: the compiled function outlives the caller's Graph
  FunctionFrame frame_;
  std::vector<Step> steps_;
};

class RefCompiler final : public BackendCompiler {
 public:
  std::string name() const override { return "ref"; }
  // f16/bf16 support (half_kernels.h) left the version alone: f32 timings did not change, and the
  // version is part of every measurement's key (a new one would drop whole cost databases).
  std::string version() const override { return "tessera-ref 3"; }   // 2: strided copies move contiguous runs (Slice, Transpose); 3: RNN/GRU/LSTM dot products over partial sums
  bool widens_half() const override { return false; }                // its kernels take f16/bf16

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override {
    return std::make_unique<RefFunction>(fn);
  }
};

}  // namespace

std::unique_ptr<BackendCompiler> make_ref_compiler() { return std::make_unique<RefCompiler>(); }

// ref's registration (backend_registration.h): its op table is its kernel registry's ops.
const BackendRegistration& ref_backend() {
  static const BackendRegistration r{
      .name = "ref",
      .make_compiler = &make_ref_compiler,
      .precision = "f32",
      .ops = ref_registry().ops(),
  };
  return r;
}

}  // namespace tessera
