// The onednn compiler (see onednn_compiler.h): one OnednnProgram per function, on one CPU engine.
#include "backends/onednn/onednn_compiler.h"

#include <string>

#include "backends/onednn/onednn_program.h"

namespace tessera {
namespace {

class OnednnFunction final : public CompiledFunction {
 public:
  OnednnFunction(const Graph& fn, dnnl::engine engine) : CompiledFunction(fn), fn_(fn), program_(fn_, engine) {}
  size_t workspace_bytes() const override { return program_.workspace_bytes(); }

 protected:
  void run_impl(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) override {
    program_.run(inputs, outputs);
  }

 private:
  Graph fn_;   // owned: the program refers to it
  onednn::OnednnProgram program_;
};

class OnednnCompiler final : public BackendCompiler {
 public:
  OnednnCompiler() : engine_(dnnl::engine::kind::cpu, 0) {}
  std::string name() const override { return "onednn"; }
  std::string version() const override {
    const dnnl_version_t* v = dnnl_version();
    return "tessera-onednn 3; oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + " " + (v->cpu_runtime == DNNL_RUNTIME_OMP ? "omp" : "seq");
  }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override {
    try {
      return std::make_unique<OnednnFunction>(fn, engine_);
    } catch (const dnnl::error& e) {
      throw KernelUnsupported(std::string("onednn: ") + e.what());
    }
  }

 private:
  dnnl::engine engine_;
};

}  // namespace

std::unique_ptr<BackendCompiler> make_onednn_compiler() { return std::make_unique<OnednnCompiler>(); }

}  // namespace tessera
