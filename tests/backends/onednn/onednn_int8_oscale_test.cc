// An int8 conv's per-channel scales as oneDNN output scales (src/backends/onednn/onednn_int8_oscale.cc):
// every int8 conv of a MobileNetV2-style function (stem, depthwise, 1x1 with a source zero point,
// a residual summed in u8 with its zero point) trades its binary_mul post-op for output scales,
// each with the host step that creates it again when the scales change; the result stays within
// int8's tolerance of ref, and new weights (another pointer, other values) give what a fresh
// compile gives on them, bit for bit: the scales follow the weights. Weights that vary behind one
// pointer (computed in another function) are quantized again on every run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "backends/onednn/int8_test_inputs.h"
#include "backends/onednn/onednn_program.h"
#include "ir/boundary_layout.h"
#include "ir/calibrated_ranges.h"
#include "runtime/int8_calibration.h"

using namespace tessera;
using tessera::testing::inputs_of;
using tessera::testing::run_function;
using tessera::testing::ref_values;
using tessera::testing::FunctionBuilder;

namespace {

// Stem 3x3 stride 2 + ReLU6 -> depthwise 3x3 + ReLU6 -> 1x1 (linear) -> 1x1 + ReLU6 -> depthwise
// + ReLU6 -> 1x1 (linear) + the linear 1x1's output (an inverted residual block's sum).
Graph block() {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 3, 32, 32});
  tessera::testing::MobileNetConv conv{b};
  ValueId y = conv(x, 3, 32, 3, 2, 1, 16, true, "0");
  y = conv(y, 32, 32, 3, 1, 32, 16, true, "1");
  const ValueId linear = conv(y, 32, 16, 1, 1, 1, 16, false, "2");
  y = conv(linear, 16, 96, 1, 1, 1, 16, true, "3");   // a signed source: a zero point
  y = conv(y, 96, 96, 3, 1, 96, 16, true, "4");
  y = conv(y, 96, 16, 1, 1, 1, 16, false, "5");
  b.output(b.node("Add", {y, linear}, {1, 16, 16, 16}));
  return std::move(b.g);
}

const dnnl::engine& cpu() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

}  // namespace

TEST_CASE("onednn_int8: every conv runs with output scales, set again when the weights change") {
  const Graph g = block();
  const Graph ranged = with_calibrated_ranges(g, calibrate_ranges(g, ref_values(g, inputs_of(g, 1)), "minmax").ranges);
  onednn::OnednnProgram p(ranged, cpu(), onednn::Precision::int8);
  const std::vector<std::string> impls = p.implementations();
  const auto count = [&](const std::string& what) {
    return std::ranges::count_if(impls, [&](const std::string& s) { return s.find(what) != std::string::npos; });
  };
  INFO("steps: " << impls.size());
  CHECK(count("convolution:") == 6);
  CHECK(count("host:int8_output_scales") == 6);   // one per conv: none kept its binary_mul
  for (size_t i = 0; i + 1 < impls.size(); ++i)   // each right before its conv
    if (impls[i] == "host:int8_output_scales") CHECK(impls[i + 1].rfind("convolution:", 0) == 0);

  std::vector<HostTensor> in = inputs_of(g, 1);
  const HostTensor first = run_function(p, ranged, in);
  const double e = relative_l2_error(first, ref_values(ranged, in)[static_cast<size_t>(ranged.outputs[0])]);
  INFO("int8 error " << e);
  CHECK(e > 1e-4);   // int8 really runs
  CHECK(e < 0.05);
  CHECK(std::ranges::equal(run_function(p, ranged, in).as<float>(), first.as<float>()));

  // New weights for every conv (new tensors: other pointers, half the values): the scales, and
  // with them each conv's primitive, follow; a fresh compile agrees bit for bit.
  for (size_t i = 1; i < in.size(); ++i) {
    HostTensor w(in[i].type);
    std::ranges::transform(in[i].as<float>(), w.as<float>().begin(), [](float v) { return v * 0.5f; });
    in[i] = std::move(w);
  }
  const HostTensor changed = run_function(p, ranged, in);
  onednn::OnednnProgram fresh(ranged, cpu(), onednn::Precision::int8);
  CHECK(std::ranges::equal(changed.as<float>(), run_function(fresh, ranged, in).as<float>()));
  CHECK_FALSE(std::ranges::equal(changed.as<float>(), first.as<float>()));
}

// Weights that vary between runs behind one pointer (computed in another function:
// BoundaryLayouts::varying_inputs): quantized, and each conv created again, on every run.
TEST_CASE("onednn_int8: weights that vary behind one pointer are quantized again on every run") {
  const Graph g = block();
  const Graph ranged = with_calibrated_ranges(g, calibrate_ranges(g, ref_values(g, inputs_of(g, 1)), "minmax").ranges);
  BoundaryLayouts layouts;
  layouts.varying_inputs.assign(g.inputs.size(), true);
  layouts.varying_inputs[0] = false;   // x
  onednn::OnednnProgram p(ranged, cpu(), onednn::Precision::int8, layouts);
  std::vector<HostTensor> in = inputs_of(g, 1);
  const HostTensor first = run_function(p, ranged, in);
  for (size_t i = 1; i < in.size(); ++i)   // the same tensors, other contents
    for (float& v : in[i].as<float>()) v *= 0.5f;
  const HostTensor changed = run_function(p, ranged, in);
  onednn::OnednnProgram fresh(ranged, cpu(), onednn::Precision::int8);
  CHECK(std::ranges::equal(changed.as<float>(), run_function(fresh, ranged, in).as<float>()));
  CHECK_FALSE(std::ranges::equal(changed.as<float>(), first.as<float>()));
}
