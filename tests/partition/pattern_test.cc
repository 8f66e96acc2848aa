// Patterns: text syntax, syntax errors with columns, matching, predicates, and the
// conv-bias-relu patterns on resnet18 matching every one of its conv blocks.
#include <catch2/catch.hpp>
#include <set>

#include "tessera/error.h"
#include "tessera/model_loader.h"
#include "partition/pattern.h"
#include "partition/test_graphs.h"

using namespace tessera;
using tessera::testing::GraphBuilder;

namespace {

std::string syntax_error(const std::string& text) {
  try {
    parse_pattern(text, "spec.json", "patterns[0].pattern");
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

Graph quiet_load(const std::string& name) {
  ImportOptions options;
  options.warn = [](const std::string&) {};
  return load_model(std::string(TESSERA_SOURCE_DIR) + "/data/models/" + name, options);
}

}  // namespace

TEST_CASE("Pattern text parses to the same patterns as C++", "[pattern]") {
  auto p = parse_pattern("Relu(Add(Conv(*, const), const))");
  auto q = Pattern::op("Relu", {Pattern::op("Add", {Pattern::op("Conv", {Pattern::any(), Pattern::constant()}),
                                                    Pattern::constant()})});
  CHECK(p->to_string() == "Relu(Add(Conv(*, const), const))");
  CHECK(p->to_string() == q->to_string());
  CHECK(parse_pattern("  Add | Sub ( * ,*)")->to_string() == "Add|Sub(*, *)");
  CHECK(parse_pattern("Relu")->to_string() == "Relu");
  CHECK(parse_pattern("Relu")->any_args());
  CHECK(parse_pattern("Shape()")->args().empty());
  CHECK(parse_pattern("Relu(Add(Conv(*, const), const))")->op_names() ==
        std::vector<std::string>{"Relu", "Add", "Conv"});
}

TEST_CASE("Pattern syntax errors say where", "[pattern]") {
  CHECK(syntax_error("Relu(") == "spec.json: patterns[0].pattern: column 6: expected an op name, '*' or 'const', found the end");
  CHECK(syntax_error("Relu(*") == "spec.json: patterns[0].pattern: column 7: expected ',' or ')', found the end");
  CHECK(syntax_error("Relu(* *)") == "spec.json: patterns[0].pattern: column 8: expected ',' or ')', found '*'");
  CHECK(syntax_error("Relu(*))") == "spec.json: patterns[0].pattern: column 8: unexpected ')' after the pattern");
  CHECK(syntax_error("Add(*, 3)") == "spec.json: patterns[0].pattern: column 8: expected an op name, '*' or 'const', found '3'");
  CHECK(syntax_error("*") == "spec.json: patterns[0].pattern: column 1: the outermost pattern must be an op, not '*'");
  CHECK(syntax_error("Add|const(*)") == "spec.json: patterns[0].pattern: column 5: 'const' is not an op name");
  CHECK(syntax_error("") == "spec.json: patterns[0].pattern: column 1: expected an op name, '*' or 'const', found the end");
}

TEST_CASE("Matching returns the op nodes only, at every node", "[pattern]") {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId w = b.weight("w");
  ValueId bias = b.weight("b");
  ValueId c0 = b.op("Conv", "c0", {x, w});
  ValueId a0 = b.op("Add", "a0", {c0, bias});
  ValueId r0 = b.op("Relu", "r0", {a0});
  ValueId c1 = b.op("Conv", "c1", {r0, w});
  ValueId a1 = b.op("Add", "a1", {c1, r0});       // residual: not a constant bias
  b.output(b.op("Relu", "r1", {a1}));
  const Graph& g = b.g;

  auto cbr = parse_pattern("Relu(Add(Conv(*, const), const))");
  auto matches = match_all(g, *cbr);
  REQUIRE(matches.size() == 1);
  CHECK(matches[0].root == 2);
  CHECK(matches[0].nodes == std::vector<NodeId>{0, 1, 2});
  CHECK(match_at(g, *cbr, 5).empty());

  auto residual = parse_pattern("Relu(Add(Conv(*, const), *))");
  CHECK(match_all(g, *residual).size() == 2);

  auto relu = parse_pattern("Relu(*)");
  auto all = match_all(g, *relu);
  REQUIRE(all.size() == 2);
  CHECK(all[0].nodes == std::vector<NodeId>{2});
  CHECK(all[1].nodes == std::vector<NodeId>{5});

  CHECK(match_all(g, *parse_pattern("Add|Relu")).size() == 4);
  CHECK(match_all(g, *parse_pattern("Conv(*)")).empty());          // exact arity
  CHECK(match_all(g, *parse_pattern("Add(*, const)")).size() == 1);
}

TEST_CASE("Attribute predicates in C++", "[pattern]") {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId w = b.weight("w");
  ValueId c0 = b.op("Conv", "c0", {x, w});
  b.g.nodes[0].attrs["group"] = int64_t{1};
  ValueId c1 = b.op("Conv", "c1", {c0, w});
  b.g.nodes[1].attrs["group"] = int64_t{4};
  b.output(c1);
  auto dense = Pattern::op("Conv", {Pattern::any(), Pattern::constant()})
                   ->where("group == 1", [](const Graph&, const Node& n) { return attr_int(n.attrs, "group", 1) == 1; });
  CHECK(dense->to_string() == "Conv[group == 1](*, const)");
  auto m = match_all(b.g, *dense);
  REQUIRE(m.size() == 1);
  CHECK(m[0].root == 0);
}

TEST_CASE("conv-bias-relu patterns match every conv block of resnet18", "[pattern][models]") {
  Graph g = quiet_load("resnet18.onnx");
  // BatchNorm is folded into Conv by the export, so the bias is Conv's third input. A conv block
  // ends either in Relu(Conv) or, at the end of a residual block, in Relu(Add(Conv, shortcut)).
  auto plain = parse_pattern("Relu(Conv(*, const, const))");
  auto residual = parse_pattern("Relu(Add(Conv(*, const, const), *))");
  auto m1 = match_all(g, *plain);
  auto m2 = match_all(g, *residual);
  CHECK(m1.size() == 9);      // stem + the first conv of each of the 8 basic blocks
  CHECK(m2.size() == 8);      // the second conv of each basic block, with its residual Add
  std::set<NodeId> relus, convs;
  for (const auto* ms : {&m1, &m2}) {
    for (const auto& m : *ms) {
      relus.insert(m.root);
      for (NodeId n : m.nodes)
        if (g.node(n).op == "Conv") convs.insert(n);
    }
  }
  int relu_count = 0, downsample = 0;
  for (NodeId i = 0; i < g.num_nodes(); ++i) {
    if (g.node(i).op == "Relu") {
      ++relu_count;
      CHECK(relus.count(i) == 1);
    }
    // Every Conv is in a match except the 1x1 downsample convs, which are the shortcut (`*`).
    if (g.node(i).op == "Conv" && !convs.count(i)) ++downsample;
  }
  CHECK(relu_count == 17);
  CHECK(downsample == 3);
}
