// The straight emit pipeline and the --emit DIR outputs.
#include <filesystem>

#include "emit/emit_test_util.h"
#include "support/files.h"
#include "support/temp_dir.h"
#include "emit/emit_pipeline.h"
#include "emit/module_printer.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

Plan mixed_plan(const Graph& g) {
  return test::hand_plan(g, {{"tvm", {"conv0", "relu0"}, {}, 2.0}, {"ref", {"conv1"}, {}, 1.5},
                             {"byoc", {"add0", "relu1"}, {{"byoc.add", {"add0"}}, {"byoc.relu", {"relu1"}}}, 0.9}});
}

TEST_CASE("emit pipeline: outline, tvm's passes, ref codegen, lowering; dumps changed steps", "[emit][pipeline]") {
  Graph g = test::load_test_model("conv_block.json");
  Plan plan = mixed_plan(g);
  EmitOptions options = default_emit_options(plan);
  std::vector<std::string> steps;
  options.dump = [&](const std::string& step, const Module&) { steps.push_back(step); };
  EmitResult r = emit_module(g, plan, options);
  CHECK(steps == std::vector<std::string>{"outline", "tvm.convert_layout", "tvm.fold_constants", "backend_passes",
                                          "codegen", "lower"});
  CHECK(r.notes.empty());
  const Function& ref = r.module.functions.at(r.module.main.node(1).op);
  CHECK(ref.is_extern());
  REQUIRE(r.module.external_modules.at(ref.symbol).artifact);
  // The cost-model-only backends are lowered; their text is stable.
  Module shown = r.module;
  shown.external_modules.clear();
  test::check_golden("pipeline_conv_block", print_module(shown));
}

TEST_CASE("emit dir: plan.json, module.txt, module.onnx, graph.dot, graph.svg", "[emit][pipeline]") {
  Graph g = test::load_test_model("conv_block.json");
  Plan plan = mixed_plan(g);
  EmitResult r = emit_module(g, plan, default_emit_options(plan));
  testing::TempDir tmp;
  const fs::path dir = tmp / "emit";
  write_emit_dir(dir.string(), g, plan, r.module, "{}\n");
  for (const char* f : {"plan.json", "module.txt", "module.onnx", "graph.dot", "graph.svg"}) {
    INFO(f);
    CHECK(fs::file_size(dir / f) > 0);
  }
  const std::string text = testing::read_file(dir / "graph.dot");
  CHECK(text.find("subgraph cluster_2") != std::string::npos);
  CHECK(text.find("cluster_legend") != std::string::npos);
  CHECK(text.find("byoc  cost 0.9") != std::string::npos);
  for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().extension() != ".tmp");
}

}  // namespace
}  // namespace tessera
