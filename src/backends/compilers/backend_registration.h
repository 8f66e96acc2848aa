// BackendRegistration: one real backend, stated once. A backend's folder defines one object that
// names everything the rest of tessera asks about it:
//
//   name            "onednn": the --backends name, and the stem of its built-in spec
//                   (data/backends/onednn.json or src/backends/onednn/onednn.json), so the spec's
//                   partition rule and "boundary_layout" belong to the registration
//   make_compiler   the compiler's factory
//   precision       the arithmetic it computes in ("f32"; "bf16" for a precision variant)
//   ops             its op table: every op its compiler builds, alone or inside one of its fused
//                   patterns (for ref, whose spec says "*": its kernel registry's ops, which the
//                   test holds to every op the op registry knows)
//
// and src/backends/registered_backends.inc lists it with one line (`TESSERA_BACKEND(onednn)`, which
// names the function `const BackendRegistration& onednn_backend()` its folder defines).
//
// The op table is the compiler's side of the spec's claim. A compiler made by make_backend_compiler
// carries its registration, and BackendCompiler::compile refuses a function holding an op outside
// the table (KernelUnsupported, naming the node), so the table bounds what the compiler builds; the
// registration test (tests/backends/compilers/backend_registration_test.cc) checks that it equals
// what the spec claims (its "ops" and the ops its patterns name), backend by backend. A spec that
// claims an op its compiler lacks, or a compiler that builds an op the search is never offered,
// fails that test instead of a search or a node test.
//
// Not here: the device (the spec's), the version (the compiler's: it is part of every measured
// cost's key and changes with the code, not with the registration).
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/backend_spec.h"
#include "backends/spec/backend_spec_detail.h"
#include "ir/boundary_layout.h"

namespace tessera {

class BackendCompiler;

// The ops a compiler builds, by ONNX op type.
class OpTable {
 public:
  OpTable() = default;
  OpTable(std::vector<std::string> ops);   // any order; duplicates dropped
  OpTable(std::initializer_list<const char*> ops);

  bool builds(std::string_view op) const;
  // Sorted, unique.
  const std::vector<std::string>& ops() const { return ops_; }

 private:
  std::vector<std::string> ops_;
};

struct BackendRegistration {
  std::string name;
  std::unique_ptr<BackendCompiler> (*make_compiler)() = nullptr;
  std::string precision = "f32";
  OpTable ops;

  // The built-in spec of `name` (parsed once); a registration without one is a build error
  // caught by the registration test.
  const BackendSpec& spec() const;
  // The spec's "boundary_layout".
  Layout boundary_layout() const { return spec().detail().boundary_layout; }
};

// Every registered backend (src/backends/registered_backends.inc), sorted by name.
const std::vector<const BackendRegistration*>& backend_registrations();
// The registration of `name`, or nullptr.
const BackendRegistration* find_backend_registration(std::string_view name);

}  // namespace tessera
