// Outline with reuse: golden text, idempotence, weight-only differences share, resnet18 blocks.
#include <map>
#include <set>

#include "emit/emit_test_util.h"
#include "tessera/error.h"
#include "emit/module_printer.h"
#include "emit/outline.h"

namespace tessera {
namespace {

using test::HandPartition;

Plan conv_block_plan(const Graph& g) {
  return test::hand_plan(g, {{"onednn", {"conv0", "relu0"}, {{"onednn.conv_relu", {"conv0", "relu0"}}}, 2.0},
                             {"onednn", {"conv1"}, {}, 1.5},
                             {"byoc", {"add0", "relu1"}, {}, 0.9}});
}

TEST_CASE("outline: conv_block, with attributes and a Composite", "[emit][outline]") {
  Graph g = test::load_test_model("conv_block.json");
  Module m = outline(g, conv_block_plan(g));
  test::check_golden("outline_conv_block", print_module(m));
  REQUIRE(m.functions.size() == 3);
  const Function& f = m.functions.begin()->second;
  CHECK(f.attrs.at(attr::kPrimitive) == "1");
  CHECK(f.attrs.at(attr::kGlobalSymbol) == f.symbol);
}

TEST_CASE("outline: running it again on its output changes nothing", "[emit][outline]") {
  Graph g = test::load_test_model("conv_block.json");
  Plan plan = conv_block_plan(g);
  Module once = outline(g, plan);
  Module twice = outline(once, g, plan);
  test::check_pass_golden("outline_conv_block_again", print_module(once), print_module(twice));
}

TEST_CASE("outline: partitions differing only in weights share one function", "[emit][outline]") {
  Graph g = test::load_test_model("conv_block.json");
  // conv0 and conv1 have equal types and attributes; their weights differ (w0/b0 vs w1/b1).
  Module m = outline(g, test::hand_plan(g, {{"onednn", {"conv0"}}, {"ref", {"relu0"}},
                                            {"onednn", {"conv1"}}, {"ref", {"add0"}}, {"ref", {"relu1"}}}));
  test::check_golden("outline_shared_weights", print_module(m));
  CHECK(m.functions_of("onednn").size() == 1);
  CHECK(m.functions_of("ref").size() == 2);   // relu0 and relu1 share too
}

TEST_CASE("outline: only the chosen backends, then a second round", "[emit][outline]") {
  Graph g = test::load_test_model("conv_block.json");
  Plan plan = conv_block_plan(g);
  Module first = outline(g, plan, OutlineOptions{{"byoc"}});
  CHECK(first.functions.size() == 1);
  CHECK(first.main.find_node("conv0") != kNoNode);
  Module second = outline(first, g, plan);
  CHECK(second.functions.size() == 3);
  for (const Node& n : second.main.nodes) CHECK(second.is_call(n));
  for (const auto& [symbol, fn] : first.functions) CHECK(print_function(second.functions.at(symbol)) == print_function(fn));
}

TEST_CASE("outline: a node no main holds is a user error", "[emit][outline]") {
  Graph g = test::load_test_model("conv_block.json");
  Plan plan = conv_block_plan(g);
  Graph other = g;
  other.nodes[0].name = "renamed";
  CHECK_THROWS_AS(outline(Module::from_graph(other), g, plan), UserError);
}

TEST_CASE("outline: resnet18's repeated blocks share one function", "[emit][outline]") {
  Graph g = test::load_test_model("resnet18.onnx");
  // One partition per basic block ("/layerN/layerN.M/..."), every other node alone on ref.
  std::map<std::string, std::vector<std::string>> blocks;
  std::vector<HandPartition> parts;
  for (const Node& n : g.nodes) {
    if (n.name.rfind("/layer", 0) == 0) blocks[n.name.substr(0, n.name.find('/', 8))].push_back(n.name);
    else parts.push_back({"ref", {n.name}});
  }
  for (auto& [prefix, names] : blocks) parts.push_back({"onednn", names});
  Module m = outline(g, test::hand_plan(g, parts));
  std::map<std::string, std::string> callee_of;   // block -> symbol
  for (const auto& [call, from] : m.outlined_from) callee_of[from.front().substr(0, from.front().find('/', 8))] =
                                                        m.main.node(m.main.find_node(call)).op;
  CHECK(callee_of.at("/layer1/layer1.0") == callee_of.at("/layer1/layer1.1"));
  CHECK(callee_of.at("/layer2/layer2.0") != callee_of.at("/layer2/layer2.1"));
  // 8 blocks: layer1's two share; the rest (a downsample block and an identity block per layer) differ.
  CHECK(m.functions_of("onednn").size() == 7);
  CHECK(m.main.num_nodes() == static_cast<int>(parts.size()));
}

}  // namespace
}  // namespace tessera
