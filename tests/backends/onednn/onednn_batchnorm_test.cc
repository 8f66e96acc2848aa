// onednn: inference BatchNormalization over channel blocks or nhwc runs as a depthwise 1x1
// convolution with folded weights (onednn_batchnorm.cc); on plain memory, as oneDNN's batch
// normalization. DenseNet's pre-activation (BatchNorm -> ReLU -> 1x1 conv) against ref, run twice
// (the folded weights reused, or recomputed where a parameter is computed inside the function).
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

ValueId conv(FunctionBuilder& b, ValueId x, int64_t o, int64_t k) {
  const Shape xs = b.g.value(x).type.shape;
  const Shape ys{xs[0], o, xs[2], xs[3]};
  const ValueId w = b.input("w" + std::to_string(b.g.values.size()), {o, xs[1], k, k});
  const int64_t p = k / 2;
  return b.node("Conv", {x, w}, ys, {{"pads", I{p, p, p, p}}});
}

// BatchNormalization + ReLU; the variance a constant (>= 0) or |an input| computed in the function.
ValueId bn_relu(FunctionBuilder& b, ValueId x, bool var_inside) {
  const Shape xs = b.g.value(x).type.shape;
  const std::string k = std::to_string(b.g.values.size());
  std::vector<float> v(static_cast<size_t>(xs[1]));
  for (size_t c = 0; c < v.size(); ++c) v[c] = 0.25f + 0.1f * static_cast<float>(c % 7);
  const ValueId var = var_inside ? b.node("Abs", {b.input("var" + k, {xs[1]})}, {xs[1]})
                                 : b.constant<float>("var" + k, DType::f32, {xs[1]}, v);
  const ValueId y = b.node("BatchNormalization", {x, b.input("s" + k, {xs[1]}), b.input("b" + k, {xs[1]}),
                                                  b.input("m" + k, {xs[1]}), var}, xs);
  return b.node("Relu", {y}, xs);
}

}  // namespace

TEST_CASE("onednn: BatchNorm + ReLU over channel blocks is a depthwise 1x1 conv") {
  for (bool var_inside : {false, true}) {
    FunctionBuilder b;
    // A Winograd 3x3 conv writes channel blocks on AVX-512 CPUs; 40 channels: a padded last block.
    const ValueId x = conv(b, b.input("x", {1, 8, 10, 10}), 40, 3);
    b.output(conv(b, bn_relu(b, x, var_inside), 16, 1));
    check_against_ref("onednn", b.g, 1e-3);
    if (onednn::detail::avx512_blocks()) {
      CHECK(count_prefix(b.g, "batch_normalization") == 0);
      CHECK(count_prefix(b.g, "host:batchnorm_fold") == 1);
      CHECK(count_prefix(b.g, "convolution:jit_dw") == 1);
    }
  }
}

TEST_CASE("onednn: BatchNorm over nhwc and over plain memory") {
  SECTION("nhwc: after a 1x1 conv") {
    FunctionBuilder b;
    const ValueId x = conv(b, b.input("x", {1, 24, 9, 9}), 32, 1);
    b.output(conv(b, bn_relu(b, x, false), 16, 1));
    check_against_ref("onednn", b.g, 1e-3);
  }
  SECTION("plain: a function input, normalized and returned") {
    FunctionBuilder b;
    b.output(bn_relu(b, b.input("x", {1, 12, 5, 5}), false));
    check_against_ref("onednn", b.g, 1e-4);
    CHECK(count_prefix(b.g, "batch_normalization") == 1);
  }
}
