// Golden text tests for the printer: tests/frontend/golden/<model>.txt holds the expected text.
// Regenerate with TESSERA_UPDATE_GOLDEN=1 after an intended change, and review the diff.
#include <catch2/catch.hpp>

#include "support/golden.h"
#include "frontend/printer.h"
#include "frontend/test_util.h"

using namespace tessera;

namespace {

void check_golden(const std::string& model, const std::string& golden) {
  INFO(model);
  testing::check_golden(golden, print_graph(load_model(model, test::quiet())));
}

}  // namespace

TEST_CASE("printer golden files", "[frontend]") {
  check_golden("data/models/collage_diamond.json", "tests/frontend/golden/collage_diamond.txt");
  check_golden("data/models/conv_block.json", "tests/frontend/golden/conv_block.txt");
  check_golden("tests/inputs/good/shape_chain.json", "tests/frontend/golden/shape_chain.txt");
  check_golden("tests/inputs/good/symbolic.onnx", "tests/frontend/golden/symbolic.txt");
}

TEST_CASE("printing is stable: same graph, same text", "[frontend]") {
  Graph g = load_model("data/models/resnet18.onnx", test::quiet());
  CHECK(print_graph(g) == print_graph(load_model("data/models/resnet18.onnx", test::quiet())));
  CHECK(value_ref(g, g.inputs[0]) == "%input");
  CHECK(value_ref(g, g.nodes[0].outputs[0]) == "%0");
}
