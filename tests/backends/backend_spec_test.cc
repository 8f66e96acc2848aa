// Backend specs: every built-in loads and builds a rule; every bad spec in bad_specs/ fails with
// its exact message; --backends resolution; built-in rules on bundled models.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "support/files.h"
#include "support/temp_dir.h"
#include "tessera/backend_spec.h"
#include "backends/spec/backend_spec_detail.h"
#include "partition/dataflow_index.h"
#include "tessera/error.h"
#include "tessera/model_loader.h"

using namespace tessera;

namespace {

const std::string kDir = std::string(TESSERA_SOURCE_DIR) + "/tests/backends/bad_specs/";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<Candidate> candidates(const BackendSpec& spec, const DataflowIndex& index, RuleStats& stats) {
  return spec.make_rule()->run(RuleContext{index, spec.name, stats});
}

Graph model(const std::string& name) {
  ImportOptions options;
  options.warn = [](const std::string&) {};
  return load_model(std::string(TESSERA_SOURCE_DIR) + "/data/models/" + name, options);
}

}  // namespace

TEST_CASE("Built-in specs load and build rules", "[backend_spec]") {
  CHECK(builtin_backend_names() ==
        std::vector<std::string>{"blas", "byoc", "eigen", "halide", "onednn", "onednn_bf16", "onednn_int8", "ref", "tvm", "xnnpack"});
  for (const auto& name : builtin_backend_names()) {
    BackendSpec spec = builtin_backend_spec(name);
    CHECK(spec.name == name);
    CHECK(spec.device == "cpu");
    CHECK(spec.make_rule() != nullptr);
  }
  BackendSpec ref = builtin_backend_spec("ref");
  CHECK(ref.all_ops);
  CHECK(ref.supports("AnythingAtAll"));
  CHECK(ref.detail().fusion == FusionStyle::None);
  BackendSpec blas = builtin_backend_spec("blas");
  CHECK(blas.supports("MatMul"));
  CHECK(blas.supports("Add"));        // through its bias pattern
  CHECK(!blas.supports("Relu"));
  BackendSpec byoc = builtin_backend_spec("byoc");
  CHECK(byoc.ops.empty());
  CHECK(byoc.detail().patterns.size() == 2);
  CHECK(byoc.detail().fusion == FusionStyle::Arbitrary);
  CHECK(byoc.detail().limits.max_exits == 1);
  CHECK(error_of([] { builtin_backend_spec("cuda"); }).find("backends: unknown backend 'cuda'") == 0);
}

TEST_CASE("Every bad spec fails with its exact message", "[backend_spec]") {
  std::ifstream in(kDir + "expected_errors.txt");
  REQUIRE(in);
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    std::string path = kDir + line.substr(0, tab);
    std::string expected = line.substr(tab + 1);
    expected.replace(expected.find("FILE"), 4, path);
    INFO(line.substr(0, tab));
    CHECK(error_of([&] { load_backend_spec(path); }) == expected);
    ++checked;
  }
  CHECK(checked == 17);
  CHECK(error_of([] { load_backend_spec("/no/such/spec.json"); }) ==
        "/no/such/spec.json: cannot read the backend spec file");
}

TEST_CASE("Spec defaults follow docs/design.md", "[backend_spec]") {
  BackendSpec s = parse_backend_spec(
      R"({"format": "tessera.backend", "version": 1, "name": "mini", "ops": ["Relu", "Add", "Relu"]})", "mini.json");
  CHECK(s.device == "cpu");
  CHECK(s.ops == std::vector<std::string>{"Add", "Relu"});
  CHECK(s.detail().fusion == FusionStyle::None);
  CHECK(s.detail().limits.max_depth == 0);
  CHECK(s.detail().limits.max_exits == 1);
  CHECK(!s.detail().limits.allow_taps);
  CHECK(s.source == "mini.json");
}

TEST_CASE("--backends resolution", "[backend_spec]") {
  CHECK(split_backend_list("ref, onednn ,eigen") == std::vector<std::string>{"ref", "onednn", "eigen"});
  CHECK(error_of([] { split_backend_list("ref,,eigen"); }) ==
        "backends: empty backend name in \"ref,,eigen\" (expected a,b,c)");
  auto specs = resolve_backends({"onednn", "ref"}, {});
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].name == "onednn");
  CHECK(specs[1].name == "ref");
  CHECK(error_of([] { resolve_backends({"ref", "ref"}, {}); }) == "backends: backend 'ref' is listed twice");
  CHECK(error_of([] { resolve_backends({"mystery"}, {}); }).find("backends: unknown backend 'mystery'") == 0);
  // The library names its own argument; a front end spells it (the CLI as --backends).
  try {
    resolve_backends({"mystery"}, {});
    FAIL("resolve_backends took an unknown backend");
  } catch (const UserError& e) {
    CHECK(e.option_name() == "backends");
    CHECK(e.detail().find("unknown backend 'mystery'") == 0);
  }

  // A spec file shadows a built-in of the same name.
  testing::TempDir dir;
  const std::string path = dir.file("byoc_shadow.json");
  testing::write_file(path, R"({"format": "tessera.backend", "version": 1, "name": "byoc", "ops": ["Relu"], "max_depth": 3})");
  auto shadowed = resolve_backends({"byoc", "tvm"}, {path});
  CHECK(shadowed[0].source == path);
  CHECK(shadowed[0].detail().limits.max_depth == 3);
  CHECK(shadowed[1].source == "<builtin>/tvm.json");
  CHECK(error_of([&] { resolve_backends({"byoc"}, {path, path}); }) ==
        path + ": name: backend \"byoc\" is also defined by " + path);
}

TEST_CASE("Collage test backends on the chain graph", "[backend_spec]") {
  // r0 = Relu(x); a = Abs(r0); r1 = Relu(a); out = Add(a, r1)
  Graph g = model("collage_chain.json");
  DataflowIndex index(g);
  RuleStats stats;
  auto byoc = candidates(builtin_backend_spec("byoc"), index, stats);
  std::set<std::vector<int>> insides;
  for (const auto& c : byoc) {
    insides.insert(c.inside().members());
    for (const auto& comp : c.composites) CHECK((comp.name == "byoc.relu" || comp.name == "byoc.add"));
    CHECK(c.composites.size() == static_cast<size_t>(c.inside().count()));
  }
  // Abs is not byoc's: {r0}, {r1}, {out}, {r1, out}.
  CHECK(insides == std::set<std::vector<int>>{{0}, {2}, {3}, {2, 3}});
  auto tvm = candidates(builtin_backend_spec("tvm"), index, stats);
  std::set<std::vector<int>> tvm_insides;
  for (const auto& c : tvm) tvm_insides.insert(c.inside().members());
  // {a, r1} and {r0, a, r1} have a tap (a feeds out) and two exits; {a, out} is not convex.
  CHECK(tvm_insides == std::set<std::vector<int>>{{0}, {1}, {2}, {3}, {0, 1}, {2, 3}, {1, 2, 3}, {0, 1, 2, 3}});
  CHECK(stats.rejections["2 exits, max 1"] == 2);
}

TEST_CASE("onednn fuses conv post-op chains on resnet18", "[backend_spec][models]") {
  Graph g = model("resnet18.onnx");
  DataflowIndex index(g);
  RuleStats stats;
  auto cs = candidates(builtin_backend_spec("onednn"), index, stats);
  int conv_relu = 0, conv_add_relu = 0;
  for (const auto& c : cs) {
    std::string label = c.sub_graph.label();
    if (label == "Conv+Relu") ++conv_relu;
    if (label == "Conv+Add+Relu") ++conv_add_relu;
    CHECK(!c.sub_graph.check(builtin_backend_spec("onednn").detail().limits).has_value());
  }
  CHECK(conv_relu == 9);
  CHECK(conv_add_relu >= 8);
  CHECK(stats.limits.empty());
}

// onednn_int8's chain patterns (data/backends/onednn_int8.json): candidates holding two or three
// convolutions, which the fusion closure alone never joins, extended by the residual Add + Relu,
// so that an int8 function can keep u8 between them (onednn_int8_chain.h).
TEST_CASE("onednn_int8 offers conv chains and residual blocks on resnet18 and mobilenet_v2", "[backend_spec][models]") {
  const BackendSpec spec = builtin_backend_spec("onednn_int8");
  auto count_labels = [&](const char* file) {
    Graph g = model(file);
    DataflowIndex index(g);
    RuleStats stats;
    std::map<std::string, int> n;
    for (const auto& c : candidates(spec, index, stats)) {
      CHECK(!c.sub_graph.check(spec.detail().limits).has_value());
      ++n[c.sub_graph.label()];
    }
    return n;
  };
  auto r18 = count_labels("resnet18.onnx");
  CHECK(r18["Conv+Relu+Conv"] == 8);               // every basic block's two convs
  CHECK(r18["Conv+Relu+Conv+Add+Relu"] >= 4);      // whole blocks, residual included
  auto mb2 = count_labels("mobilenet_v2.onnx");
  CHECK(mb2["Conv+Clip+Conv+Clip+Conv"] == 17);    // expand, depthwise, project of 16 blocks; the stem, depthwise, project
  CHECK(mb2["Conv+Clip+Conv+Clip+Conv+Add"] >= 1);
}
