// BackendCompiler::native_layout: read from the built-in spec, so that a backend states its
// boundary layout once (its spec's "boundary_layout") and its compiler cannot disagree.
#include <map>

#include "backends/compilers/backend_compiler.h"
#include "tessera/backend_spec.h"

namespace tessera {

Layout BackendCompiler::native_layout() const {
  // Parsed once: codegen and measurement ask for every function they compile.
  static const std::map<std::string, Layout> layouts = [] {
    std::map<std::string, Layout> m;
    for (const std::string& n : builtin_backend_names()) m[n] = builtin_backend_spec(n).boundary_layout;
    return m;
  }();
  auto it = layouts.find(name());
  return it == layouts.end() ? Layout::plain : it->second;
}

}  // namespace tessera
