// module.onnx: one local function per outlined function, one call per use, onnx.checker passes.
#include <onnx/checker.h>

#include <fstream>

#include "emit/emit_test_util.h"
#include "support/skip.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "emit/backend_pipeline.h"
#include "emit/codegen.h"
#include "emit/module_onnx.h"
#include "emit/outline.h"

namespace tessera {
namespace {

Module resnet18_blocks(Graph& g) {
  g = test::load_test_model("resnet18.onnx");
  std::map<std::string, std::vector<std::string>> blocks;
  std::vector<test::HandPartition> parts;
  for (const Node& n : g.nodes) {
    if (n.name.rfind("/layer", 0) == 0) blocks[n.name.substr(0, n.name.find('/', 8))].push_back(n.name);
    else parts.push_back({"ref", {n.name}});
  }
  for (auto& [prefix, names] : blocks) parts.push_back({"tvm", names});
  return outline(g, test::hand_plan(g, parts));
}

onnx::ModelProto resnet18_module_onnx() {
  Graph g;
  Module m = run_backend_passes(resnet18_blocks(g), {builtin_pipeline("tvm")});   // NHWC tvm.Conv inside
  m = codegen(m, {{"ref", [](const Graph&, const std::vector<bool>&, const std::vector<bool>&, const std::vector<bool>&) { return ExternalModule{"ref", "", nullptr}; }}});
  onnx::ModelProto p = module_to_onnx(m);
  CHECK(p.functions_size() == static_cast<int>(m.functions.size()));
  return p;
}

TEST_CASE("module.onnx: functions per outlined function, calls per use, checker passes", "[emit][onnx]") {
  onnx::ModelProto p = resnet18_module_onnx();
  CHECK(p.ir_version() >= 8);
  int tvm_calls = 0;
  for (const auto& n : p.graph().node()) tvm_calls += n.domain() == "tvm";
  CHECK(tvm_calls == 8);   // 8 blocks, 7 functions: one call per use
  CHECK_NOTHROW(onnx::checker::check_model(p));
}

// Python's onnx.checker too (a second implementation, with full function checks). Runs as the
// ctest entry emit_test.python-onnx, Skipped when /usr/bin/python3 lacks onnx (scripts/setup.sh
// installs python3-onnx, so CI never skips it).
TEST_CASE("module.onnx: Python's onnx.checker passes", "[.python-onnx]") {
  if (testing::run_command("/usr/bin/python3 -c 'import onnx'").exit_code != 0)
    testing::skip_test("/usr/bin/python3 cannot import onnx (apt-get install python3-onnx)");
  onnx::ModelProto p = resnet18_module_onnx();
  testing::TempDir dir;
  const std::string path = dir.file("module.onnx");
  {
    std::ofstream out(path, std::ios::binary);
    REQUIRE(p.SerializeToOstream(&out));
  }
  testing::Process r = testing::run_command(
      "/usr/bin/python3 -c 'import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' " + path);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  // The control: a broken model (not in SSA form: two nodes write one value) must fail the same
  // command, or the check proves nothing.
  REQUIRE(p.graph().node_size() >= 2);
  p.mutable_graph()->mutable_node(1)->set_output(0, p.graph().node(0).output(0));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    REQUIRE(p.SerializeToOstream(&out));
  }
  CHECK(testing::run_command("/usr/bin/python3 -c 'import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1]), "
                             "full_check=True)' " + path).exit_code != 0);
}

}  // namespace
}  // namespace tessera
