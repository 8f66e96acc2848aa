// The onednn compiler (see onednn_compiler.h): one OnednnProgram per function, on one CPU engine.
#include "backends/onednn/onednn_compiler.h"

#include <string>

#include "backends/compilers/program_function.h"
#include "backends/onednn/onednn_program.h"

namespace tessera {
namespace {

class OnednnCompiler final : public BackendCompiler {
 public:
  explicit OnednnCompiler(onednn::Precision precision)
      : precision_(precision), engine_(dnnl::engine::kind::cpu, 0) {}
  std::string name() const override {
    return precision_ == onednn::Precision::bf16 ? "onednn_bf16" : precision_ == onednn::Precision::int8 ? "onednn_int8" : "onednn";
  }
  std::string version() const override {
    const dnnl_version_t* v = dnnl_version();
    const char* variant = precision_ == onednn::Precision::bf16 ? "tessera-onednn_bf16 1; " : precision_ == onednn::Precision::int8 ? "tessera-onednn_int8 5; " : "";
    return std::string(variant) + "tessera-onednn 29; oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + " " + (v->cpu_runtime == DNNL_RUNTIME_OMP ? "omp" : "seq");
  }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override { return compile_impl(fn, BoundaryLayouts{}); }
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn, const BoundaryLayouts& layouts) const override {
    if (precision_ == onednn::Precision::bf16) {
      std::string why;
      if (!cpu_has_native_bf16(&why)) throw KernelUnsupported("onednn_bf16: " + why);
    }
    try {
      return std::make_unique<ProgramFunction<onednn::OnednnProgram>>(fn, engine_, precision_, layouts);
    } catch (const dnnl::error& e) {
      throw KernelUnsupported(name() + ": " + e.what());
    }
  }

 private:
  onednn::Precision precision_;
  dnnl::engine engine_;
};

}  // namespace

std::unique_ptr<BackendCompiler> make_onednn_compiler() { return std::make_unique<OnednnCompiler>(onednn::Precision::f32); }

std::unique_ptr<BackendCompiler> make_onednn_bf16_compiler() {
  return std::make_unique<OnednnCompiler>(onednn::Precision::bf16);
}

std::unique_ptr<BackendCompiler> make_onednn_int8_compiler() {
  return std::make_unique<OnednnCompiler>(onednn::Precision::int8);
}

}  // namespace tessera
