// onednn: a squeeze-and-excitation scale folded into the next conv's weights
// (onednn_scale_fold.cc). Against ref, and which Mul passes over the activation remain: none
// where the fold pays (a large image, few output channels), the Mul where it does not (7x7,
// many output channels) or where the scaled value has another reader.
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_program.h"
#include "onednn_implementations.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using tessera::testing::count_prefix;
using I = std::vector<int64_t>;

namespace {

// Binary steps whose dst has dims `d` (the Mul over the activation: [1, C, H, W]).
size_t binaries_over(const Graph& g, const onednn::Dims& d) {
  const onednn::OnednnProgram p(g, dnnl::engine(dnnl::engine::kind::cpu, 0));
  const std::vector<std::string> impl = p.implementations();
  const std::vector<onednn::Dims> dims = p.dst_dims();
  size_t n = 0;
  for (size_t i = 0; i < impl.size(); ++i) n += impl[i].rfind("binary", 0) == 0 && dims[i] == d;
  return n;
}

struct SeBlock {
  ValueId h, y;   // the depthwise conv's activation, the scaled value
};

// depthwise 3x3 + SiLU, SE (pool, 1x1 + Relu, 1x1 + Sigmoid, Mul), project 1x1 to `o` channels.
SeBlock se_block(FunctionBuilder& b, int64_t c, int64_t hw, int64_t o, bool hard = false) {
  const Shape xs{1, c, hw, hw}, ps{1, c, 1, 1}, qs{1, c / 4, 1, 1};
  const ValueId x = b.input("x", xs);
  const ValueId d = b.node("Conv", {x, b.input("wd", {c, 1, 3, 3}), b.input("bd", {c})}, xs, {{"group", c}, {"pads", I{1, 1, 1, 1}}});
  const ValueId h = b.node("Mul", {d, b.node("Sigmoid", {d}, xs)}, xs);
  const ValueId p = b.node("GlobalAveragePool", {h}, ps);
  const ValueId q = b.node("Relu", {b.node("Conv", {p, b.input("w1", {c / 4, c, 1, 1}), b.input("b1", {c / 4})}, qs)}, qs);
  const ValueId r = b.node("Conv", {q, b.input("w2", {c, c / 4, 1, 1}), b.input("b2", {c})}, ps);
  const ValueId s = hard ? b.node("HardSigmoid", {r}, ps, {{"alpha", 1.0f / 6}}) : b.node("Sigmoid", {r}, ps);
  const ValueId y = b.node("Mul", {s, h}, xs);   // the scale first: either side folds
  b.output(b.node("Conv", {y, b.input("wp", {o, c, 1, 1}), b.input("bp", {o})}, {1, o, hw, hw}));
  return {h, y};
}

}  // namespace

TEST_CASE("onednn scale fold: an SE block's Mul becomes the projection's weights, results unchanged") {
  for (const bool hard : {false, true}) {
    FunctionBuilder b;
    se_block(b, 48, 28, 24, hard);
    check_against_ref("onednn", b.g, 1e-4);
    CHECK(binaries_over(b.g, {1, 48, 28, 28}) == 0);
    // The 1x1 projection's W * s per run: oneDNN's jit kernel over [O, C] x [1, C], not ref:any.
    CHECK(count_prefix(b.g, "binary:ref") == 0);
    CHECK(count_prefix(b.g, "binary:") == 1);
  }
}

TEST_CASE("onednn scale fold: kept as a Mul where the weights outweigh the image or the value is read twice") {
  SECTION("7x7, 160 output channels: 4 * 160 > 49") {
    FunctionBuilder b;
    se_block(b, 64, 7, 160);
    check_against_ref("onednn", b.g, 1e-4);
    CHECK(binaries_over(b.g, {1, 64, 7, 7}) == 1);
  }
  SECTION("the scaled value is also an output") {
    FunctionBuilder b;
    const SeBlock s = se_block(b, 48, 28, 24);
    b.output(s.y);
    check_against_ref("onednn", b.g, 1e-4);
    CHECK(binaries_over(b.g, {1, 48, 28, 28}) == 1);
  }
}
