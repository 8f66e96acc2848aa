// The xnnpack compiler (see xnnpack_compiler.h): one XnnpackProgram per function.
#include "backends/xnnpack/xnnpack_compiler.h"

#include "backends/compilers/program_function.h"
#include "backends/xnnpack/xnnpack_program.h"
#include "backends/xnnpack/xnnpack_threadpool.h"

namespace tessera {
namespace {

class XnnpackCompiler final : public BackendCompiler {
 public:
  std::string name() const override { return "xnnpack"; }
  // Debian's libxnnpack0 has no version call: the snapshot is named by its package version.
  std::string version() const override { return "tessera-xnnpack 3; XNNPACK 0.0~git20220216.ae108ef"; }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override { return compile_impl(fn, BoundaryLayouts{}); }
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn, const BoundaryLayouts& layouts) const override {
    xnnpack::initialize();
    return std::make_unique<ProgramFunction<xnnpack::XnnpackProgram>>(fn, layouts);
  }
};

}  // namespace

std::unique_ptr<BackendCompiler> make_xnnpack_compiler() { return std::make_unique<XnnpackCompiler>(); }

}  // namespace tessera
