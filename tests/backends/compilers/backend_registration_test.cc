// Backend registrations: each backend's spec and its compiler's op table agree, op for op, and a
// compiler carries what its registration states (precision, boundary layout, op table).
#include <algorithm>
#include <iterator>
#include <set>

#include "backends/spec/backend_spec_detail.h"
#include "backends/compilers/backend_registration.h"
#include "backends/compilers/function_builder.h"
#include "tessera/error.h"
#include "ir/op_registry.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;

namespace {

// Every op the spec offers the search by name: its "ops" and the ops its patterns name. A spec
// with "ops": "*" (ref) offers every op, so its table is held to the ops the op registry knows
// (below) and may build more.
std::set<std::string> claimed_ops(const BackendSpec& spec) {
  std::set<std::string> ops(spec.ops.begin(), spec.ops.end());
  for (const CompositeSpec& p : spec.detail().patterns)
    for (const std::string& op : p.pattern->op_names()) ops.insert(op);
  return ops;
}

std::string joined(const std::set<std::string>& ops) {
  std::string out;
  for (const std::string& op : ops) out += (out.empty() ? "" : ", ") + op;
  return out.empty() ? "(none)" : out;
}

}  // namespace

TEST_CASE("every registered backend has a built-in spec and a compiler of its name") {
  REQUIRE(!backend_registrations().empty());
  for (const BackendRegistration* r : backend_registrations()) {
    INFO(r->name);
    CHECK(is_builtin_backend(r->name));
    CHECK(r->spec().name == r->name);
    REQUIRE(r->make_compiler != nullptr);
    CHECK(make_backend_compiler(r->name)->registration() == r);
    CHECK(find_backend_registration(r->name) == r);
  }
  CHECK(find_backend_registration("tvm") == nullptr);   // a spec without a compiler: cost models only
}

// Ops the op registry knows that ref has no kernel for: a model holding one gets a ref candidate
// that cannot compile. Listed so that the gap is seen, and so that this test fails when it grows
// (or shrinks: then the entry goes).
const std::set<std::string> kRefLacks = {"Gelu", "LpNormalization", "Mish", "Upsample"};

TEST_CASE("a spec offering every op has an op table with every op the op registry knows") {
  for (const BackendRegistration* r : backend_registrations()) {
    if (!r->spec().all_ops) continue;
    std::set<std::string> missing;
    for (const std::string& op : registered_ops())
      if (!r->ops.builds(op)) missing.insert(op);
    INFO(r->name << ": the op registry knows, the op table lacks: " << joined(missing));
    CHECK(missing == (r->name == "ref" ? kRefLacks : std::set<std::string>{}));
  }
}

TEST_CASE("each backend's spec claims exactly the ops its compiler's op table builds") {
  for (const BackendRegistration* r : backend_registrations()) {
    if (r->spec().all_ops) continue;   // the test above
    const std::set<std::string> claimed = claimed_ops(r->spec());
    const std::set<std::string> built(r->ops.ops().begin(), r->ops.ops().end());
    std::set<std::string> claimed_not_built, built_not_claimed;
    std::set_difference(claimed.begin(), claimed.end(), built.begin(), built.end(),
                        std::inserter(claimed_not_built, claimed_not_built.end()));
    std::set_difference(built.begin(), built.end(), claimed.begin(), claimed.end(),
                        std::inserter(built_not_claimed, built_not_claimed.end()));
    INFO(r->name << ": the spec claims, the op table lacks: " << joined(claimed_not_built));
    INFO(r->name << ": the op table builds, the spec does not offer: " << joined(built_not_claimed));
    CHECK(claimed_not_built.empty());
    CHECK(built_not_claimed.empty());
  }
}

TEST_CASE("a compiler states its registration's precision and boundary layout") {
  for (const BackendRegistration* r : backend_registrations()) {
    INFO(r->name);
    const auto compiler = make_backend_compiler(r->name);
    CHECK(compiler->precision() == r->precision);
    CHECK(compiler->native_layout() == r->spec().detail().boundary_layout);
  }
  CHECK(make_backend_compiler("onednn_bf16")->precision() == "bf16");
  CHECK(make_backend_compiler("xnnpack")->native_layout() == Layout::nhwc);
  CHECK(make_backend_compiler("eigen")->native_layout() == Layout::plain);
}

TEST_CASE("a compiler refuses a function with an op outside its op table, naming the node") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 6, 6});
  b.output(b.node("Relu", {b.node("HardSigmoid", {x}, {1, 4, 6, 6})}, {1, 4, 6, 6}));
  REQUIRE(!find_backend_registration("blas")->ops.builds("HardSigmoid"));
  try {
    make_backend_compiler("blas")->compile(b.g);
    FAIL("blas compiled a HardSigmoid");
  } catch (const KernelUnsupported& e) {
    CHECK(std::string(e.what()).find("(HardSigmoid): not in blas's op table") != std::string::npos);
  }
  CHECK_NOTHROW(make_backend_compiler("ref")->compile(b.g));
}
