// The xnnpack compiler (see xnnpack_compiler.h): one XnnpackProgram per function.
#include "backends/xnnpack/xnnpack_compiler.h"

#include "backends/xnnpack/xnnpack_program.h"
#include "backends/xnnpack/xnnpack_threadpool.h"

namespace tessera {
namespace {

class XnnpackFunction final : public CompiledFunction {
 public:
  explicit XnnpackFunction(const Graph& fn) : CompiledFunction(fn), fn_(fn), program_(fn_) {}
  size_t workspace_bytes() const override { return program_.workspace_bytes(); }

 protected:
  void run_impl(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) override {
    program_.run(inputs, outputs);
  }

 private:
  Graph fn_;   // owned: the program refers to it
  xnnpack::XnnpackProgram program_;
};

class XnnpackCompiler final : public BackendCompiler {
 public:
  std::string name() const override { return "xnnpack"; }
  // Debian's libxnnpack0 has no version call: the snapshot is named by its package version.
  std::string version() const override { return "tessera-xnnpack 1; XNNPACK 0.0~git20220216.ae108ef"; }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override {
    xnnpack::initialize();
    return std::make_unique<XnnpackFunction>(fn);
  }
};

}  // namespace

std::unique_ptr<BackendCompiler> make_xnnpack_compiler() { return std::make_unique<XnnpackCompiler>(); }

}  // namespace tessera
