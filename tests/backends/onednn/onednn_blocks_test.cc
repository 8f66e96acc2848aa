// onednn: where channel blocks start (onednn_blocks.cc), against ref: the conv in front of a
// depthwise conv writes the blocks itself when its other readers keep them too.
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_anchor.h"
#include "backends/onednn/onednn_implementations.h"
#include "backends/onednn/onednn_program.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using tessera::testing::count_prefix;
using I = std::vector<int64_t>;

// MobileNetV3's stem and first block: a strided 3x3 conv with HardSwish, a depthwise 3x3, a 1x1
// project and the residual Add of the stem's output, then a 1x1 expand into the next depthwise
// conv and the head's global pool. The stem writes the blocks: neither the depthwise conv nor the
// Add reorders its output (two reorders of a 16x16x16 value each run when it writes nhwc).
TEST_CASE("onednn blocks: a conv whose output feeds a depthwise conv and a residual Add writes blocks") {
  FunctionBuilder b;
  const Shape xs{1, 3, 32, 32}, ys{1, 16, 16, 16}, es{1, 32, 16, 16};
  const ValueId x = b.input("x", xs);
  const ValueId stem = b.node("HardSwish", {b.node("Conv", {x, b.input("ws", {16, 3, 3, 3})}, ys,
                                                   {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}})}, ys);
  const ValueId d = b.node("Relu", {b.node("Conv", {stem, b.input("wd", {16, 1, 3, 3})}, ys,
                                           {{"group", int64_t(16)}, {"pads", I{1, 1, 1, 1}}})}, ys);
  const ValueId p = b.node("Conv", {d, b.input("wp", {16, 16, 1, 1})}, ys);
  const ValueId r = b.node("Add", {p, stem}, ys);
  const ValueId e = b.node("Relu", {b.node("Conv", {r, b.input("we", {32, 16, 1, 1})}, es)}, es);
  const ValueId d2 = b.node("Conv", {e, b.input("wd2", {32, 1, 3, 3})}, es, {{"group", int64_t(32)}, {"pads", I{1, 1, 1, 1}}});
  b.output(b.node("GlobalAveragePool", {d2}, {1, 32, 1, 1}));
  check_against_ref("onednn", b.g, 1e-5);
  if (onednn::avx512_blocks()) {
    CHECK(count_prefix(b.g, "convolution:jit_dw") == 2);
    CHECK(count_prefix(b.g, "reorder:") <= 1);   // the pooled output to plain
  }
}
