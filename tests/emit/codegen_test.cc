// Extern stubs after codegen, and a second partitioning round that leaves them untouched.
#include <algorithm>
#include <map>

#include "emit/emit_test_util.h"
#include "emit/codegen.h"
#include "tessera/error.h"
#include "frontend/printer.h"
#include "backends/kernel.h"
#include "emit/module_printer.h"
#include "emit/outline.h"

namespace tessera {
namespace {

// A codegen that "compiles" by describing the body; it refuses Add to show a skipped function.
Codegen fake_codegen(const std::string& backend) {
  return {backend, [backend](const Graph& body, const std::vector<bool>&, const std::vector<bool>&, const std::vector<bool>&) {
            for (const Node& n : body.nodes)
              if (n.op == "Add") throw KernelUnsupported(n.name + ": Add not supported");
            return ExternalModule{backend, std::to_string(body.num_nodes()) + " nodes", nullptr};
          }};
}

TEST_CASE("codegen: compiled functions become stubs with only Extern=1", "[emit][codegen]") {
  Graph g = test::load_test_model("conv_block.json");
  Module m = outline(g, test::hand_plan(g, {{"onednn", {"conv0", "relu0"}}, {"onednn", {"conv1", "add0", "relu1"}}}));
  std::vector<std::string> skipped;
  Module c = codegen(m, {fake_codegen("onednn")}, &skipped);
  test::check_golden("codegen_conv_block", print_module(c));
  const Function& stub = c.functions.at("tvmgen_default_onednn_main_0");
  CHECK(stub.attrs == FunctionAttrs{{attr::kExtern, "1"}});
  CHECK(c.external_modules.count("tvmgen_default_onednn_main_0"));
  REQUIRE(skipped.size() == 1);   // the one with an Add stays a normal function
  CHECK(c.functions.at("tvmgen_default_onednn_main_1").backend() == "onednn");
  // Call sites are plain calls, unchanged; codegen again changes nothing.
  CHECK(print_graph(c.main) == print_graph(m.main));
  test::check_pass_golden("codegen_again", print_module(c), print_module(codegen(c, {fake_codegen("onednn")})));
}

TEST_CASE("codegen: graph inputs and outputs no other call reads stay plain at a function's boundary", "[emit][codegen]") {
  // conv_block: x -> conv0 -> relu0 -> conv1 -> add0(+x) -> relu1 -> y. The first function takes
  // x (a graph input) and gives r0 to the second, which takes r0 and x and gives y (a graph output).
  Graph g = test::load_test_model("conv_block.json");
  Module m = outline(g, test::hand_plan(g, {{"onednn", {"conv0", "relu0"}}, {"onednn", {"conv1", "add0", "relu1"}}}));
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> native;   // function -> names
  std::map<std::string, std::vector<std::string>> varying;                                         // function -> names
  Codegen record{"onednn", [&](const Graph& body, const std::vector<bool>& in, const std::vector<bool>& out,
                               const std::vector<bool>& vary) {
                   for (size_t i = 0; i < vary.size(); ++i)
                     if (vary[i]) varying[body.name].push_back(body.value(body.inputs[i]).name);
                   auto& [ins, outs] = native[body.name];
                   for (size_t i = 0; i < in.size(); ++i)
                     if (in[i]) ins.push_back(body.value(body.inputs[i]).name);
                   for (size_t i = 0; i < out.size(); ++i)
                     if (out[i]) outs.push_back(body.value(body.outputs[i]).name);
                   return ExternalModule{"onednn", "", nullptr};
                 }};
  codegen(m, {record});
  REQUIRE(native.size() == 2);
  const Graph& first = m.functions.at("tvmgen_default_onednn_main_0").body;
  const Graph& second = m.functions.at("tvmgen_default_onednn_main_1").body;
  // Native: only what one function hands the other (weights and graph inputs and outputs plain).
  CHECK(native[first.name].first.empty());
  REQUIRE(native[first.name].second.size() == 1);
  REQUIRE(native[second.name].first.size() == 1);
  CHECK(native[second.name].first[0] == native[first.name].second[0]);
  CHECK(native[second.name].second.empty());
  // Varying: what changes from run to run, the graph input x and what is computed from it, never
  // the convolutions' weights.
  // (first: x of its x, W, B; second: r0 and x of its r0, W, B, x).
  CHECK(first.inputs.size() > 1);
  CHECK(varying[first.name].size() == 1);
  REQUIRE(varying[second.name].size() == 2);
  CHECK(std::count(varying[second.name].begin(), varying[second.name].end(), native[second.name].first[0]) == 1);
}

TEST_CASE("re-partitioning for a second backend set keeps the first set's stubs", "[emit][codegen]") {
  Graph g = test::load_test_model("conv_block.json");
  // Round 1: backend set {onednn}: outline its partitions only, compile them.
  Plan first = test::hand_plan(g, {{"onednn", {"conv0", "relu0"}}, {"onednn", {"conv1"}},
                                   {"ref", {"add0"}}, {"ref", {"relu1"}}});
  Module round1 = codegen(outline(g, first, OutlineOptions{{"onednn"}}), {fake_codegen("onednn")});
  REQUIRE(round1.external_modules.size() == 2);
  // Round 2: a plan over what main holds now (calls + add0 + relu1) for the set {byoc}.
  const Graph main1 = round1.main;
  Plan second = test::hand_plan(main1, {{"byoc", {"add0", "relu1"}}});
  Module round2 = codegen(outline(round1, main1, second), {fake_codegen("byoc")});
  test::check_golden("repartition_conv_block", print_module(round2));
  for (const auto& [symbol, stub] : round1.functions) {
    CHECK(print_function(round2.functions.at(symbol)) == print_function(stub));
    CHECK(round2.external_modules.at(symbol).summary == round1.external_modules.at(symbol).summary);
  }
  CHECK(round2.functions.size() == 3);
  for (const Node& n : round2.main.nodes) CHECK(round2.is_call(n));
  // A partition that would re-outline a call is refused with a reason.
  Plan bad = test::hand_plan(main1, {{"byoc", {main1.node(0).name}}});
  CHECK_THROWS_AS(outline(round1, main1, bad), UserError);
}

}  // namespace
}  // namespace tessera
