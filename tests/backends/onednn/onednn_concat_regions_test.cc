// onednn: channel Concats written in place (onednn_concat_regions.cc): each input's producer
// writes its slab of the Concat's buffer, a DenseNet chain of growing Concats shares one buffer,
// and the hazards (a residual summed in place, layouts that do not fit) keep their copies.
// Results against ref; where this CPU runs oneDNN in 16-channel blocks, the copies counted.
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_anchor.h"
#include "backends/onednn/onednn_compiler.h"
#include "backends/onednn/onednn_program.h"
#include "backends/onednn/onednn_implementations.h"

using namespace tessera;
using tessera::testing::count_prefix;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using I = std::vector<int64_t>;

namespace {

// A 3x3 pad-1 conv + Relu of x into `o` channels.
ValueId conv3(FunctionBuilder& b, ValueId x, int64_t o) {
  const Shape& xs = b.g.value(x).type.shape;
  const Shape ys{xs[0], o, xs[2], xs[3]};
  const ValueId w = b.input("w" + std::to_string(b.g.values.size()), {o, xs[1], 3, 3});
  return b.node("Relu", {b.node("Conv", {x, w}, ys, {{"pads", I{1, 1, 1, 1}}})}, ys);
}

// A 1x1 conv + Relu of x into `o` channels.
ValueId conv1(FunctionBuilder& b, ValueId x, int64_t o) {
  const Shape& xs = b.g.value(x).type.shape;
  const Shape ys{xs[0], o, xs[2], xs[3]};
  return b.node("Relu", {b.node("Conv", {x, b.input("w" + std::to_string(b.g.values.size()), {o, xs[1], 1, 1})}, ys)}, ys);
}

ValueId concat(FunctionBuilder& b, std::vector<ValueId> xs) {
  Shape s = b.g.value(xs[0]).type.shape;
  s[1] = 0;
  for (ValueId x : xs) s[1] += b.g.value(x).type.shape[1];
  return b.node("Concat", xs, s, {{"axis", int64_t(1)}});
}

}  // namespace

// DenseNet's block: every layer concatenates all features before it.
TEST_CASE("onednn: a chain of growing Concats shares one buffer, each feature written once") {
  FunctionBuilder b;
  const ValueId x0 = conv3(b, b.input("x", {1, 8, 6, 6}), 32);
  std::vector<ValueId> feats{x0};
  ValueId c = x0;
  for (int layer = 0; layer < 3; ++layer) {
    feats.push_back(conv3(b, conv1(b, c, 32), 16));
    c = concat(b, feats);
  }
  b.output(conv1(b, c, 16));
  // Four Winograd 3x3 convs in a row (onednn_ops.cc): their rounding compounds past 1e-4 (the
  // same with the Concats copied).
  check_against_ref("onednn", b.g, 2e-3);
  if (onednn::detail::avx512_blocks()) CHECK(count_prefix(b.g, "host:concat") == 0);   // 3 copies without
}

// GoogLeNet's inception module: branches read only by their Concat.
TEST_CASE("onednn: inception branches write their slabs of the Concat") {
  FunctionBuilder b;
  const ValueId x = conv3(b, b.input("x", {1, 8, 6, 6}), 16);
  const ValueId p = b.node("MaxPool", {x}, {1, 16, 6, 6}, {{"kernel_shape", I{3, 3}}, {"pads", I{1, 1, 1, 1}}});
  const ValueId y = concat(b, {conv1(b, x, 16), conv3(b, conv1(b, x, 16), 32), conv1(b, p, 16)});
  b.output(conv1(b, y, 16));
  check_against_ref("onednn", b.g);
  if (onednn::detail::avx512_blocks()) CHECK(count_prefix(b.g, "host:concat") == 0);
}

TEST_CASE("onednn: Concat inputs that cannot be written in place are copied, results unchanged") {
  SECTION("a Concat input later summed into as a residual, the Concat read after the sum") {
    FunctionBuilder b;
    const ValueId x = conv3(b, b.input("x", {1, 8, 6, 6}), 16);
    const ValueId a = conv3(b, x, 16);
    const ValueId y = concat(b, {a, conv1(b, x, 16)});
    const ValueId s = conv1(b, x, 16);
    const Shape rs{1, 16, 6, 6};
    const ValueId r = b.node("Add", {b.node("Conv", {s, b.input("wr", {16, 16, 3, 3})}, rs, {{"pads", I{1, 1, 1, 1}}}), a}, rs);
    b.output(r);
    b.output(conv1(b, y, 16));   // reads the Concat after the residual sum
    check_against_ref("onednn", b.g);
  }
  SECTION("a Concat that begins a later one, summed into as a residual before the later one runs") {
    FunctionBuilder b;
    const ValueId x0 = conv3(b, b.input("x", {1, 8, 6, 6}), 16);
    const ValueId f1 = conv3(b, x0, 16);
    const ValueId y1 = concat(b, {x0, f1});
    const ValueId f2 = conv3(b, y1, 16);
    const Shape rs{1, 32, 6, 6};
    const ValueId r = b.node("Add", {b.node("Conv", {f2, b.input("wr", {32, 16, 3, 3})}, rs, {{"pads", I{1, 1, 1, 1}}}), y1}, rs);
    b.output(conv1(b, r, 16));
    b.output(conv1(b, concat(b, {x0, f1, f2}), 16));   // y1's bytes again, after the sum
    check_against_ref("onednn", b.g, 1e-3);
  }
  SECTION("a function input, a channel count off the blocks, and the Concat a function output") {
    FunctionBuilder b;
    const ValueId x = conv3(b, b.input("x", {1, 8, 6, 6}), 16);
    const ValueId y = concat(b, {x, b.input("z", {1, 16, 6, 6}), conv1(b, x, 16)});
    const ValueId odd = concat(b, {conv1(b, x, 16), conv1(b, x, 5), y});
    b.output(conv1(b, odd, 16));
    b.output(concat(b, {conv1(b, x, 16), conv3(b, x, 16)}));
    check_against_ref("onednn", b.g);
  }
  SECTION("an input written plain in its slab, the Concat copied in blocks, the input read after") {
    FunctionBuilder b;
    const Shape xs{1, 16, 6, 6};
    const ValueId p = b.node("Relu", {b.input("x", xs)}, xs);   // plain, like its input
    const ValueId y = concat(b, {p, conv3(b, b.input("z", {1, 8, 6, 6}), 16)});
    b.output(conv1(b, y, 16));
    b.output(b.node("Sigmoid", {p}, xs));
    check_against_ref("onednn", b.g);
  }
  SECTION("one value twice in a Concat, and in two Concats at other places") {
    FunctionBuilder b;
    const ValueId x = conv3(b, b.input("x", {1, 8, 6, 6}), 16);
    const ValueId a = conv1(b, x, 16), c = conv3(b, x, 16);
    const ValueId y1 = concat(b, {a, c, a});
    const ValueId y2 = concat(b, {c, a});
    b.output(conv1(b, y1, 16));
    b.output(conv1(b, y2, 16));
    check_against_ref("onednn", b.g);
  }
}
