// onednn: linear Resize (onednn_resize.cc), against ref: the host pass where the result leaves
// the function plain or the source is plain (every coordinate mode), oneDNN's resampling
// primitive in the source's channel blocks inside a function (half_pixel), and what stays refused.
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_program.h"
#include "backends/kernel.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using I = std::vector<int64_t>;

namespace {

std::vector<std::string> impls(const Graph& g) {
  return onednn::OnednnProgram(g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
}

bool has_prefix(const std::vector<std::string>& v, const std::string& p) {
  for (const std::string& s : v)
    if (s.rfind(p, 0) == 0) return true;
  return false;
}

ValueId resize(FunctionBuilder& b, ValueId x, Shape ys, const std::string& coord, bool by_scales = false) {
  const Shape xs = b.g.value(x).type.shape;
  Attributes a{{"mode", std::string("linear")}, {"coordinate_transformation_mode", coord}};
  if (by_scales) {
    std::vector<float> s;
    for (size_t d = 0; d < xs.size(); ++d) s.push_back(static_cast<float>(ys[d]) / static_cast<float>(xs[d]));
    const ValueId sc = b.constant<float>("scales" + std::to_string(b.g.values.size()), DType::f32, {static_cast<int64_t>(s.size())}, s);
    return b.node("Resize", {x, kNoValue, sc}, ys, a);
  }
  std::vector<int64_t> sz(ys.begin(), ys.end());
  const ValueId sizes = b.constant<int64_t>("sizes" + std::to_string(b.g.values.size()), DType::i64, {static_cast<int64_t>(sz.size())}, sz);
  return b.node("Resize", {x, kNoValue, kNoValue, sizes}, ys, a);
}

}  // namespace

TEST_CASE("onednn resize: a segmentation head's upsampling to the output is the host pass") {
  for (const std::string coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    for (const bool by_scales : {false, true}) {
      DYNAMIC_SECTION(coord << (by_scales ? " (scales)" : " (sizes)")) {
        FunctionBuilder b;
        const ValueId x = b.input("x", {1, 16, 7, 9});
        const ValueId h = b.node("Conv", {x, b.input("w", {21, 16, 1, 1})}, {1, 21, 7, 9});
        b.output(resize(b, h, {1, 21, 56, 72}, coord, by_scales));
        check_against_ref("onednn", b.g, 1e-5);
        CHECK(has_prefix(impls(b.g), "host:resize_linear"));
      }
    }
  }
  SECTION("downsampling, a plain function input") {
    FunctionBuilder b;
    b.output(resize(b, b.input("x", {2, 3, 20, 30}), {2, 3, 7, 11}, "half_pixel"));
    check_against_ref("onednn", b.g, 1e-5);
  }
}

TEST_CASE("onednn resize: an upsampling inside the function runs oneDNN's resampling in blocks") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 16, 8, 8});
  const ValueId c = b.node("Conv", {x, b.input("w", {32, 16, 1, 1})}, {1, 32, 8, 8});
  const ValueId r = resize(b, c, {1, 32, 16, 16}, "half_pixel");
  const ValueId s = b.node("Conv", {b.input("x2", {1, 16, 16, 16}), b.input("w2", {32, 16, 1, 1})}, {1, 32, 16, 16});
  b.output(b.node("Relu", {b.node("Add", {r, s}, {1, 32, 16, 16})}, {1, 32, 16, 16}));
  check_against_ref("onednn", b.g, 1e-5);
  CHECK(has_prefix(impls(b.g), "resampling"));
}

TEST_CASE("onednn resize: nearest and resizing channels are refused") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 8, 8});
  b.output(b.node("Resize", {x, kNoValue, b.constant<float>("s", DType::f32, {4}, {1, 1, 2, 2})}, {1, 4, 16, 16},
                  {{"mode", std::string("nearest")}}));
  CHECK_THROWS_AS(impls(b.g), KernelUnsupported);
}
