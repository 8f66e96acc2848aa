// make_backend_compiler: the built-in real backends by name (see tessera/backend_compiler.h).
#include <functional>
#include <map>

#include "backends/blas/blas_compiler.h"
#include "backends/compilers/ref_compiler.h"
#include "backends/eigen/eigen_compiler.h"
#include "backends/halide/halide_compiler.h"
#include "backends/onednn/onednn_compiler.h"
#include "backends/xnnpack/xnnpack_compiler.h"
#include "tessera/error.h"

namespace tessera {
namespace {

using Factory = std::unique_ptr<BackendCompiler> (*)();

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"blas", &make_blas_compiler},
      {"eigen", &make_eigen_compiler},
      {"halide", &make_halide_compiler},
      {"onednn", &make_onednn_compiler},
      {"onednn_bf16", &make_onednn_bf16_compiler},
      {"onednn_int8", &make_onednn_int8_compiler},
      {"ref", &make_ref_compiler},
      {"xnnpack", &make_xnnpack_compiler},
  };
  return table;
}

}  // namespace

std::unique_ptr<BackendCompiler> make_backend_compiler(const std::string& name) {
  auto it = factories().find(name);
  if (it == factories().end()) {
    std::string known;
    for (const auto& [n, f] : factories()) known += (known.empty() ? "" : ", ") + n;
    throw UserError("backend '" + name + "' has no compiler here (real backends: " + known + ")");
  }
  return it->second();
}

std::vector<std::string> backend_compiler_names() {
  std::vector<std::string> names;
  for (const auto& [n, f] : factories()) names.push_back(n);
  return names;
}

}  // namespace tessera
