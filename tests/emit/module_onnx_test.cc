// module.onnx: one local function per outlined function, one call per use, onnx.checker passes.
#include <onnx/checker.h>

#include <cstdio>
#include <fstream>

#include "emit_test_util.h"
#include "tessera/backend_pipeline.h"
#include "tessera/codegen.h"
#include "tessera/module_onnx.h"
#include "tessera/outline.h"

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

TEST_CASE("module.onnx: functions per outlined function, calls per use, checker passes", "[emit][onnx]") {
  Graph g;
  Module m = run_backend_passes(resnet18_blocks(g), {builtin_pipeline("tvm")});   // NHWC tvm.Conv inside
  m = codegen(m, {{"ref", [](const Graph&) { return ExternalModule{"ref", "", nullptr}; }}});
  onnx::ModelProto p = module_to_onnx(m);
  CHECK(p.ir_version() >= 8);
  CHECK(p.functions_size() == static_cast<int>(m.functions.size()));
  int tvm_calls = 0;
  for (const auto& n : p.graph().node()) tvm_calls += n.domain() == "tvm";
  CHECK(tvm_calls == 8);   // 8 blocks, 7 functions: one call per use
  CHECK_NOTHROW(onnx::checker::check_model(p));

  // The Python checker too, where /usr/bin/python3 has onnx (scripts/setup.sh installs it).
  const std::string path = std::string(TESSERA_BINARY_DIR) + "/module_onnx_test.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    REQUIRE(p.SerializeToOstream(&out));
  }
  if (std::system("/usr/bin/python3 -c 'import onnx' 2>/dev/null") == 0) {
    std::string cmd = "/usr/bin/python3 -c 'import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1]))' " + path;
    CHECK(std::system(cmd.c_str()) == 0);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tessera
