// onednn: pointwise (1x1) convs over few nhwc pixels run as one matmul of pixel rows
// (onednn_pointwise.cc). Against ref, with the post-ops a conv takes (bias, Relu, a residual sum,
// a SiLU host pass), and which primitive each conv became: a matmul at 7x7 (49 rows), a conv at
// 9x9 (81 rows), a conv where the source is not nhwc (a function input) or the conv is strided.
#include "backends/compilers/function_builder.h"
#include "onednn_implementations.h"

using namespace tessera;
using tessera::testing::check_against_ref;
using tessera::testing::count_prefix;
using tessera::testing::FunctionBuilder;
using I = std::vector<int64_t>;

namespace {

// x [1, 32, 2*hw, 2*hw] -> strided 1x1 (nhwc, brgconv) + Relu = r [1, 64, hw, hw]
//   -> 1x1 to 64 channels + Add(r) + Relu -> 1x1 to `o` channels + SiLU.
void pointwise_chain(FunctionBuilder& b, int64_t hw, int64_t o) {
  const Shape rs{1, 64, hw, hw}, ys{1, o, hw, hw};
  const ValueId x = b.input("x", {1, 32, 2 * hw, 2 * hw});
  const ValueId r = b.node("Relu", {b.node("Conv", {x, b.input("w0", {64, 32, 1, 1}), b.input("b0", {64})}, rs, {{"strides", I{2, 2}}})}, rs);
  const ValueId c1 = b.node("Conv", {r, b.input("w1", {64, 64, 1, 1}), b.input("b1", {64})}, rs);
  const ValueId s = b.node("Relu", {b.node("Add", {c1, r}, rs)}, rs);
  const ValueId c2 = b.node("Conv", {s, b.input("w2", {o, 64, 1, 1})}, ys);
  b.output(b.node("Mul", {c2, b.node("Sigmoid", {c2}, ys)}, ys));
}

}  // namespace

TEST_CASE("onednn pointwise: 1x1 convs over at most 64 nhwc pixels run as a matmul, results unchanged") {
  FunctionBuilder b;
  pointwise_chain(b, 7, 40);   // 49 rows; 40 output channels, not a multiple of oneDNN's blocks
  check_against_ref("onednn", b.g, 1e-4);
  CHECK(count_prefix(b.g, "matmul:") == 2);
  CHECK(count_prefix(b.g, "convolution:") == 1);   // the strided one
}

TEST_CASE("onednn pointwise: more pixels, or a source that is not nhwc, keep the convolution") {
  SECTION("9x9: 81 rows") {
    FunctionBuilder b;
    pointwise_chain(b, 9, 40);
    check_against_ref("onednn", b.g, 1e-4);
    CHECK(count_prefix(b.g, "matmul:") == 0);
    CHECK(count_prefix(b.g, "convolution:") == 3);
  }
  SECTION("a plain function input as the source") {
    FunctionBuilder b;
    const ValueId x = b.input("x", {1, 64, 7, 7});
    b.output(b.node("Conv", {x, b.input("w", {48, 64, 1, 1}), b.input("b", {48})}, {1, 48, 7, 7}));
    check_against_ref("onednn", b.g, 1e-4);
    CHECK(count_prefix(b.g, "matmul:") == 0);
  }
}
