// Per-backend passes: layout conversion + constant folding on one backend's functions only.
#include <cstring>

#include "emit/emit_test_util.h"
#include "emit/backend_pipeline.h"
#include "emit/convert_layout.h"
#include "emit/fold_constants.h"
#include "emit/module_printer.h"
#include "emit/outline.h"

namespace tessera {
namespace {

// conv0 on tvm (which declares NHWC layout), the identical conv1 on onednn (which does not).
Module two_conv_module(Graph& g) {
  g = test::load_test_model("conv_block.json");
  return outline(g, test::hand_plan(g, {{"tvm", {"conv0", "relu0"}}, {"onednn", {"conv1"}},
                                        {"ref", {"add0"}}, {"ref", {"relu1"}}}));
}

TEST_CASE("backend passes: a Conv on tvm is converted, an identical Conv on onednn is not", "[emit][passes]") {
  Graph g;
  Module before = two_conv_module(g);
  Module after = run_backend_passes(before, {builtin_pipeline("tvm"), builtin_pipeline("onednn")});
  test::check_golden("passes_layout_conv_block", print_module(after));
  for (const std::string& symbol : before.functions_of("onednn"))
    CHECK(print_function(after.functions.at(symbol)) == print_function(before.functions.at(symbol)));
  for (const std::string& symbol : before.functions_of("ref"))
    CHECK(print_function(after.functions.at(symbol)) == print_function(before.functions.at(symbol)));
  // The caller still passes NCHW activations; only the weight argument became a folded constant.
  const Node& call = after.main.node(0);
  CHECK(after.main.value(call.inputs[0]).name == "x");
  CHECK(after.main.value(call.inputs[1]).name == "w0_ohwi");
  CHECK(after.main.value(call.inputs[1]).type.shape == Shape{8, 3, 3, 8});
}

TEST_CASE("backend passes: running them again changes nothing", "[emit][passes]") {
  Graph g;
  Module once = run_backend_passes(two_conv_module(g), {builtin_pipeline("tvm")});
  Module twice = run_backend_passes(once, {builtin_pipeline("tvm")});
  test::check_pass_golden("passes_layout_again", print_module(once), print_module(twice));
}

TEST_CASE("backend passes: a backend without passes changes nothing", "[emit][passes]") {
  Graph g;
  Module m = two_conv_module(g);
  test::check_pass_golden("passes_onednn_only", print_module(m),
                          print_module(run_backend_passes(m, {builtin_pipeline("onednn"), builtin_pipeline("ref")})));
}

TEST_CASE("fold_constants: the folded weight holds the transposed data (OIHW -> OHWI)", "[emit][passes]") {
  Graph g = test::load_test_model("conv_block.json");
  ValueId w0 = g.find_value("w0");
  auto bytes = std::make_shared<TensorBytes>(8 * 8 * 3 * 3 * sizeof(float));
  for (int i = 0; i < 8 * 8 * 9; ++i) {
    float f = static_cast<float>(i);
    std::memcpy(bytes->data() + i * sizeof(float), &f, sizeof f);
  }
  g.value(w0).data = bytes;
  Module m = outline(g, test::hand_plan(g, {{"tvm", {"conv0"}}, {"tvm", {"relu0"}}, {"tvm", {"conv1"}},
                                            {"ref", {"add0"}}, {"ref", {"relu1"}}}));
  m = fold_constants(convert_layout(m, "tvm"), "tvm");
  ValueId folded = m.main.find_value("w0_ohwi");
  REQUIRE(folded != kNoValue);
  REQUIRE(m.main.value(folded).data);
  CHECK(m.main.find_value("w0") == kNoValue);   // no call reads it any more
  const float* out = reinterpret_cast<const float*>(m.main.value(folded).data->data());
  for (int o = 0; o < 8; ++o)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 3; ++w)
        for (int i = 0; i < 8; ++i) CHECK(out[((o * 3 + h) * 3 + w) * 8 + i] == static_cast<float>(((o * 8 + i) * 3 + h) * 3 + w));
  // conv0 and conv1 still share one function (each call folds its own weight).
  CHECK(m.functions_of("tvm").size() == 2);
  CHECK(m.main.find_value("w1_ohwi") != kNoValue);
}

}  // namespace
}  // namespace tessera
