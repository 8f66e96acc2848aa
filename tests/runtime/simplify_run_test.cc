// simplify_graph keeps what a model computes and what a plan of it looks like: the simplified and
// the exported graph give the same outputs on ref, and a torch export with Identity nodes
// partitions like the same model without them.
#include <catch2/catch.hpp>

#include <memory>

#include "search/partitioner.h"
#include "support/roofline_plan.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_model.h"
#include "runtime/executor.h"
#include "tessera/host_tensor.h"
#include "runtime/model_data.h"
#include "tessera/model_loader.h"

using namespace tessera;
using tessera::testing::roofline_plan;

namespace {

ImportOptions import_options(bool simplify) {
  ImportOptions opt{.warn = [](const std::string&) {}};
  opt.simplify = simplify;
  return opt;
}

std::vector<HostTensor> run_on(const Graph& g, const std::string& backends) {
  Executor executor(g, roofline_plan(g, backends));
  return executor.run(model_inputs(g, 0));
}

}  // namespace

TEST_CASE("simplify: folded BatchNormalizations and bias compute what the exported graph does") {
  const char* path = "tests/inputs/good/simplifiable.onnx";
  Graph simple = load_model(path, import_options(true));
  Graph raw = load_model(path, import_options(false));
  REQUIRE(simple.num_nodes() < raw.num_nodes());
  std::vector<HostTensor> a = run_on(simple, "ref"), b = run_on(raw, "ref");
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(a[0].type == b[0].type);
  CHECK(relative_l2_error(a[0], b[0]) < 1e-5);
  // The folds are real computations: an oneDNN plan of the simplified graph agrees too.
  CHECK(relative_l2_error(run_on(simple, "ref,onednn")[0], b[0]) < 1e-4);
}

TEST_CASE("simplify: a torch export with Identity nodes partitions like the model without them") {
  Graph exported = load_model("tests/inputs/good/torch_identity.onnx", import_options(true));
  Graph stripped = load_model("tests/inputs/good/torch_identity_stripped.onnx", import_options(false));
  Graph kept = load_model("tests/inputs/good/torch_identity.onnx", import_options(false));
  const size_t want = roofline_plan(stripped, "ref,onednn").partitions.size();
  CHECK(roofline_plan(exported, "ref,onednn").partitions.size() == want);
  CHECK(exported.num_nodes() == stripped.num_nodes());
  // Without the pass too: these Identities read constants, so import folds them (constant_folding.h);
  // simplify's removal of Identity nodes on computed values is tested in tests/frontend/simplify_test.cc.
  CHECK(roofline_plan(kept, "ref,onednn").partitions.size() == want);
  CHECK(kept.num_nodes() == stripped.num_nodes());
}
