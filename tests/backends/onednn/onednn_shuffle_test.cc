// onednn: a channel Concat followed by a channel shuffle (onednn_shuffle.cc), against ref: one
// host step instead of the Concat's copies and the Transpose's reorder, the Slice that only feeds
// the Concat read in its source, other group counts, and chains the step must leave alone.
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_implementations.h"
#include "backends/onednn/onednn_program.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using tessera::testing::count_prefix;
using I = std::vector<int64_t>;

namespace {

ValueId reshape(FunctionBuilder& b, ValueId x, const Shape& to) {
  const ValueId s = b.constant<int64_t>("shape" + std::to_string(b.g.values.size()), DType::i64,
                                        {static_cast<int64_t>(to.size())}, std::vector<int64_t>(to.begin(), to.end()));
  return b.node("Reshape", {x, s}, to);
}

// Concat(ins) over channels, then the shuffle of `g` groups, as PyTorch exports it.
ValueId concat_shuffle(FunctionBuilder& b, const std::vector<ValueId>& ins, int64_t g, const Shape& ys) {
  const ValueId c = b.node("Concat", ins, ys, {{"axis", int64_t(1)}});
  const ValueId r = reshape(b, c, {ys[0], g, ys[1] / g, ys[2], ys[3]});
  const ValueId t = b.node("Transpose", {r}, {ys[0], ys[1] / g, g, ys[2], ys[3]}, {{"perm", I{0, 2, 1, 3, 4}}});
  return reshape(b, t, ys);
}

ValueId conv1x1(FunctionBuilder& b, ValueId x, int64_t out, const std::string& w) {
  const Shape& xs = b.g.value(x).type.shape;
  const Shape ys{xs[0], out, xs[2], xs[3]};
  return b.node("Relu", {b.node("Conv", {x, b.input(w, {out, xs[1], 1, 1})}, ys)}, ys);
}

ValueId slice_channels(FunctionBuilder& b, ValueId x, int64_t from, int64_t to) {
  const Shape& xs = b.g.value(x).type.shape;
  const std::string k = std::to_string(b.g.values.size());
  return b.node("Slice", {x, b.constant<int64_t>("st" + k, DType::i64, {1}, {from}), b.constant<int64_t>("en" + k, DType::i64, {1}, {to}),
                          b.constant<int64_t>("ax" + k, DType::i64, {1}, {1})},
                {xs[0], to - from, xs[2], xs[3]});
}

}  // namespace

// Two ShuffleNet v2 units: the first concatenates two conv branches, the second passes the first
// half of the shuffled value through (a Slice) and convolves the second half. The first shuffle
// writes the two halves (the Slices' buffers), not the shuffled value.
TEST_CASE("onednn shuffle: a Concat and a channel shuffle are one step that writes the next split") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 16, 6, 5});
  const ValueId y1 = concat_shuffle(b, {conv1x1(b, x, 24, "wa"), conv1x1(b, x, 24, "wb")}, 2, {1, 48, 6, 5});
  const ValueId x1 = slice_channels(b, y1, 0, 24), x2 = slice_channels(b, y1, 24, 48);
  const ValueId y2 = concat_shuffle(b, {x1, conv1x1(b, x2, 24, "wc")}, 2, {1, 48, 6, 5});
  b.output(conv1x1(b, y2, 8, "wd"));
  check_against_ref("onednn", b.g, 1e-5);
  CHECK(count_prefix(b.g, "host:channel_shuffle") == 3);   // y1 as x1 and x2, then y2
  CHECK(count_prefix(b.g, "host:concat") == 0);
  CHECK(count_prefix(b.g, "reorder:") <= 2);   // none for the Slices or the Transposes
}

// The shuffled value read by a conv besides the Slices: it is written whole, and the Slice that
// only feeds the next Concat is read in it (no copy); the other Slice is a copy for its conv.
TEST_CASE("onednn shuffle: the pass-through half is read in place where the value is written whole") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 16, 6, 5});
  const ValueId y1 = concat_shuffle(b, {conv1x1(b, x, 24, "wa"), conv1x1(b, x, 24, "wb")}, 2, {1, 48, 6, 5});
  const ValueId x1 = slice_channels(b, y1, 0, 24), x2 = slice_channels(b, y1, 24, 48);
  const ValueId y2 = concat_shuffle(b, {x1, conv1x1(b, x2, 24, "wc")}, 2, {1, 48, 6, 5});
  b.output(b.node("Add", {conv1x1(b, y2, 8, "wd"), conv1x1(b, y1, 8, "we")}, {1, 8, 6, 5}));
  check_against_ref("onednn", b.g, 1e-5);
  CHECK(count_prefix(b.g, "host:channel_shuffle") == 2);
  CHECK(count_prefix(b.g, "reorder:") <= 3);   // x2's copy; none for x1
}

TEST_CASE("onednn shuffle: other group counts, inputs of several groups, the shuffled value as the output") {
  for (const int64_t g : {3, 4}) {
    DYNAMIC_SECTION(g << " groups") {
      FunctionBuilder b;
      const ValueId x = b.input("x", {2, 8, 3, 4});
      const int64_t w = 8;   // channels per group
      const ValueId a = conv1x1(b, x, w, "wa"), c = conv1x1(b, x, (g - 1) * w, "wb");
      b.output(concat_shuffle(b, {a, c}, g, {2, g * w, 3, 4}));
      check_against_ref("onednn", b.g, 1e-5);
      CHECK(count_prefix(b.g, "host:channel_shuffle") == 1);
    }
  }
  SECTION("plain function inputs") {
    FunctionBuilder b;
    b.output(concat_shuffle(b, {b.input("a", {1, 6, 2, 2}), b.input("c", {1, 6, 2, 2})}, 2, {1, 12, 2, 2}));
    check_against_ref("onednn", b.g, 1e-5);
    CHECK(count_prefix(b.g, "host:channel_shuffle") == 1);
  }
}

TEST_CASE("onednn shuffle: chains that are not a Concat's shuffle keep their own steps") {
  SECTION("a group cut by an input's edge") {
    FunctionBuilder b;
    const ValueId x = b.input("x", {1, 8, 4, 4});
    b.output(concat_shuffle(b, {conv1x1(b, x, 6, "wa"), conv1x1(b, x, 10, "wb")}, 2, {1, 16, 4, 4}));
    check_against_ref("onednn", b.g, 1e-5);
    CHECK(count_prefix(b.g, "host:channel_shuffle") == 0);
  }
  SECTION("the concatenated value read elsewhere too") {
    FunctionBuilder b;
    const ValueId x = b.input("x", {1, 8, 4, 4});
    const ValueId c = b.node("Concat", {conv1x1(b, x, 8, "wa"), conv1x1(b, x, 8, "wb")}, {1, 16, 4, 4}, {{"axis", int64_t(1)}});
    const ValueId r = reshape(b, c, {1, 2, 8, 4, 4});
    const ValueId t = b.node("Transpose", {r}, {1, 8, 2, 4, 4}, {{"perm", I{0, 2, 1, 3, 4}}});
    b.output(reshape(b, t, {1, 16, 4, 4}));
    b.output(c);
    check_against_ref("onednn", b.g, 1e-5);
    CHECK(count_prefix(b.g, "host:channel_shuffle") == 0);
  }
}
