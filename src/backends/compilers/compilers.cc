// The registered real backends (src/backends/registered_backends.inc) and make_backend_compiler.
#include <algorithm>

#include "backends/compilers/backend_compiler.h"
#include "backends/compilers/backend_registration.h"
#include "tessera/error.h"

namespace tessera {

#define TESSERA_BACKEND(name) const BackendRegistration& name##_backend();
#include "backends/registered_backends.inc"
#undef TESSERA_BACKEND

const std::vector<const BackendRegistration*>& backend_registrations() {
  static const std::vector<const BackendRegistration*> all = [] {
    std::vector<const BackendRegistration*> r = {
#define TESSERA_BACKEND(name) &name##_backend(),
#include "backends/registered_backends.inc"
#undef TESSERA_BACKEND
    };
    std::sort(r.begin(), r.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
    return r;
  }();
  return all;
}

const BackendRegistration* find_backend_registration(std::string_view name) {
  for (const BackendRegistration* r : backend_registrations())
    if (r->name == name) return r;
  return nullptr;
}

std::unique_ptr<BackendCompiler> make_backend_compiler(const std::string& name) {
  const BackendRegistration* registration = find_backend_registration(name);
  if (!registration) {
    std::string known;
    for (const BackendRegistration* r : backend_registrations()) known += (known.empty() ? "" : ", ") + r->name;
    throw UserError("backend '" + name + "' has no compiler here (real backends: " + known + ")");
  }
  std::unique_ptr<BackendCompiler> compiler = registration->make_compiler();
  TESSERA_CHECK(compiler->name() == registration->name,
                "backend '" + name + "' registers a compiler named '" + compiler->name() + "'");
  compiler->registration_ = registration;
  return compiler;
}

std::vector<std::string> backend_compiler_names() {
  std::vector<std::string> names;
  for (const BackendRegistration* r : backend_registrations()) names.push_back(r->name);
  return names;
}

}  // namespace tessera
