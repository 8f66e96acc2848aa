// OpTable, BackendRegistration::spec, and the facts a compiler reads from its registration
// (see backend_registration.h).
#include "backends/compilers/backend_registration.h"

#include <algorithm>
#include <map>

#include "backends/compilers/backend_compiler.h"
#include "tessera/error.h"

namespace tessera {

OpTable::OpTable(std::vector<std::string> ops) : ops_(std::move(ops)) {
  std::sort(ops_.begin(), ops_.end());
  ops_.erase(std::unique(ops_.begin(), ops_.end()), ops_.end());
}

OpTable::OpTable(std::initializer_list<const char*> ops) : OpTable(std::vector<std::string>(ops.begin(), ops.end())) {}

bool OpTable::builds(std::string_view op) const { return std::binary_search(ops_.begin(), ops_.end(), op); }

const BackendSpec& BackendRegistration::spec() const {
  // Parsed once: codegen and measurement ask for the boundary layout of every function they compile.
  static const std::map<std::string, BackendSpec, std::less<>> specs = [] {
    std::map<std::string, BackendSpec, std::less<>> m;
    for (const std::string& n : builtin_backend_names()) m.emplace(n, builtin_backend_spec(n));
    return m;
  }();
  auto it = specs.find(name);
  TESSERA_CHECK(it != specs.end(), "registered backend '" + name + "' has no built-in spec (" + name + ".json)");
  return it->second;
}

// BackendCompiler's facts from its registration: stated once, in the backend's folder and spec.
std::string BackendCompiler::precision() const { return registration_ ? registration_->precision : "f32"; }

Layout BackendCompiler::native_layout() const {
  return registration_ ? registration_->boundary_layout() : Layout::plain;
}

}  // namespace tessera
