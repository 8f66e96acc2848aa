// u8 values between int8 convolutions (src/backends/onednn/onednn_int8_chain.cc): a conv chain
// and residual blocks in one onednn_int8 function keep their inner activations in u8 (no f32
// conversion between the convs: one quantizing reorder per source, shared by its readers), a
// downsampling block's output too (its f32 residual read by a binary_add post-op), and match ref
// within int8's tolerance on the calibration input and a held-out one; a candidate holding two
// int8 convolutions has its end-to-end error measured whole (src/runtime/int8_calibration.h).
// The int8 epilogues (onednn_int8_variant.cc): a conv's bias and a matmul's bias shift in
// accumulator units, a batched MatMul against 2-D weights as one rank-2 GEMM.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "backends/onednn/int8_test_inputs.h"
#include "backends/compilers/backend_compiler.h"
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_program.h"
#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "ir/calibrated_ranges.h"
#include "partition/dataflow_index.h"
#include "partition/sub_graph.h"
#include "search/search_problem.h"
#include "runtime/int8_calibration.h"

using namespace tessera;
using tessera::testing::inputs_of;
using tessera::testing::ref_values;
using tessera::testing::FunctionBuilder;
using I = std::vector<int64_t>;

namespace {

const Shape kShape{1, 16, 14, 14};

ValueId conv(FunctionBuilder& b, ValueId x, const std::string& n) {
  return b.node("Conv", {x, b.input("w" + n, {16, 16, 3, 3}), b.input("b" + n, {16})}, kShape, {{"pads", I{1, 1, 1, 1}}});
}

Graph ranged(const Graph& g) { return with_calibrated_ranges(g, calibrate_ranges(g, ref_values(g, inputs_of(g, 1)), "minmax").ranges); }

double error_on(const Graph& g, uint64_t seed) {
  const std::vector<HostTensor> in = inputs_of(g, seed);
  const HostTensor out = tessera::testing::run_function(*make_backend_compiler("onednn_int8")->compile(g), g, in);
  return relative_l2_error(out, ref_values(g, in)[static_cast<size_t>(g.outputs[0])]);
}

struct Lowered {
  std::vector<std::string> u8_values;
  int reorders = 0;   // oneDNN reorders among the steps: f32 <-> u8 conversions and layout copies
};

Lowered lower(const Graph& g) {
  const onednn::OnednnProgram p(g, dnnl::engine(dnnl::engine::kind::cpu, 0), onednn::Precision::int8);
  Lowered l{p.u8_values(), 0};
  for (const std::string& s : p.implementations()) l.reorders += s.rfind("reorder", 0) == 0 ? 1 : 0;
  return l;
}

}  // namespace

TEST_CASE("onednn_int8 chain: conv -> relu -> conv passes u8 between the convs") {
  FunctionBuilder b;
  const ValueId x = b.input("x", kShape);
  const ValueId r = b.node("Relu", {conv(b, x, "0")}, kShape);
  b.output(conv(b, r, "1"));
  const Graph g = ranged(std::move(b.g));
  const Lowered l = lower(g);
  CHECK(l.u8_values == std::vector<std::string>{g.value(r).name});
  // x quantized (two reorders: in its own nchw order, then the u8 bytes into the conv's nhwc:
  // onednn_int8_variant.cc, quantize_source); the Relu's output written as u8 by the first conv.
  CHECK(l.reorders == 2);
  const double on_calibration = error_on(g, 1), held_out = error_on(g, 101);
  INFO("calibration " << on_calibration << ", held out " << held_out);
  CHECK(on_calibration > 1e-4);   // int8 really runs
  CHECK(on_calibration < 0.02);
  CHECK(held_out < 0.04);
}

// A stem conv and two ResNet basic blocks: each block's input feeds the block's first conv and
// its residual sum, both in u8; the sum reads it at its own scale, in place (nothing reads it
// after the sum).
TEST_CASE("onednn_int8 chain: residual blocks keep their activations and residual in u8") {
  FunctionBuilder b;
  const ValueId x = b.input("x", kShape);
  const ValueId s = b.node("Relu", {conv(b, x, "s")}, kShape);
  const ValueId r0 = b.node("Relu", {conv(b, s, "0")}, kShape);
  const ValueId y0 = b.node("Relu", {b.node("Add", {conv(b, r0, "1"), s}, kShape)}, kShape);
  const ValueId r1 = b.node("Relu", {conv(b, y0, "2")}, kShape);
  b.output(b.node("Relu", {b.node("Add", {conv(b, r1, "3"), y0}, kShape)}, kShape));
  const Graph g = ranged(std::move(b.g));
  const Lowered l = lower(g);
  std::vector<std::string> want{g.value(s).name, g.value(r0).name, g.value(y0).name, g.value(r1).name};
  std::sort(want.begin(), want.end());
  CHECK(l.u8_values == want);
  // x quantized for the stem (two reorders, as above); the last sum dequantizes its u8 residual
  // into its f32 result (the function's output). Nothing between the convs, no copy of a residual.
  CHECK(l.reorders == 3);
  const double on_calibration = error_on(g, 1), held_out = error_on(g, 101);
  INFO("calibration " << on_calibration << ", held out " << held_out);
  CHECK(on_calibration > 1e-4);
  CHECK(on_calibration < 0.03);
  CHECK(held_out < 0.05);
}

// A kept value that an f32 op also reads (here a MaxPool beside the next conv is no int8 reader:
// the value stays f32) and one read by an Add that is no sum post-op get their f32 copy.
TEST_CASE("onednn_int8 chain: a value with an f32 reader stays f32") {
  FunctionBuilder b;
  const ValueId x = b.input("x", kShape);
  const ValueId r0 = b.node("Relu", {conv(b, x, "0")}, kShape);
  const ValueId p = b.node("MaxPool", {r0}, kShape, {{"kernel_shape", I{3, 3}}, {"pads", I{1, 1, 1, 1}}});
  b.output(b.node("Add", {conv(b, r0, "1"), p}, kShape));
  const Graph g = ranged(std::move(b.g));
  CHECK(lower(g).u8_values.empty());
  CHECK(error_on(g, 1) < 0.02);
}

// A ResNet downsampling block (3x3 stride 2 beside a 1x1 stride-2 projection, summed) and the
// block after it. The projection's chain sums an f32 conv output (the residual before any ReLU:
// negative values): read by a binary_add post-op in f32, the block's output is still written
// u8 (held in the u8 dst at the ReLU'd result's range the residual would lose its negative
// values: 0.037 on this function against 0.011), and the next block reads it in u8.
TEST_CASE("onednn_int8 chain: a downsampling block and the block after it") {
  FunctionBuilder b;
  const Shape half{1, 32, 7, 7};
  const ValueId x = b.input("x", kShape);
  auto cv = [&](ValueId in, int64_t cin, int64_t k, int64_t s, const std::string& n) {
    const int64_t p = k / 2;
    return b.node("Conv", {in, b.input("w" + n, {32, cin, k, k}), b.input("b" + n, {32})}, half,
                  {{"pads", I{p, p, p, p}}, {"strides", I{s, s}}, {"kernel_shape", I{k, k}}});
  };
  const ValueId r0 = b.node("Relu", {cv(x, 16, 3, 2, "0")}, half);
  const ValueId c1 = cv(r0, 32, 3, 1, "1");
  const ValueId ds = cv(x, 16, 1, 2, "d");
  const ValueId y0 = b.node("Relu", {b.node("Add", {c1, ds}, half)}, half);
  const ValueId r1 = b.node("Relu", {cv(y0, 32, 3, 1, "2")}, half);
  b.output(b.node("Relu", {b.node("Add", {cv(r1, 32, 3, 1, "3"), y0}, half)}, half));
  const Graph g = ranged(std::move(b.g));
  const Lowered l = lower(g);
  std::vector<std::string> want{g.value(r0).name, g.value(y0).name, g.value(r1).name};
  std::sort(want.begin(), want.end());
  CHECK(l.u8_values == want);
  // x quantized (read by the 3x3 and the projection; two reorders, as above); the last sum
  // dequantizes its u8 residual into the function's f32 output. No quantizing reorder in front
  // of the second block.
  CHECK(l.reorders == 3);
  const double on_calibration = error_on(g, 1), held_out = error_on(g, 101);
  INFO("calibration " << on_calibration << ", held out " << held_out);
  CHECK(on_calibration > 1e-4);
  CHECK(on_calibration < 0.02);
  CHECK(held_out < 0.03);
}

// int8_calibration.h: a candidate with two int8 anchors is measured whole (its function run int8,
// u8 between the convs, ref downstream), not as the sum of its anchors' errors alone.
TEST_CASE("Int8CandidateErrors: a two-conv candidate's end-to-end error is its function's, measured whole") {
  FunctionBuilder b;
  const ValueId x = b.input("x", kShape);
  const ValueId r0 = b.node("Relu", {conv(b, x, "0")}, kShape);
  const ValueId r1 = b.node("Relu", {conv(b, r0, "1")}, kShape);
  const ValueId p = b.node("GlobalAveragePool", {r1}, {1, 16, 1, 1});
  const ValueId f = b.node("Flatten", {p}, {1, 16});
  b.output(b.node("Gemm", {f, b.input("wf", {10, 16}), b.input("bf", {10})}, {1, 10}, {{"transB", int64_t{1}}}));
  const Graph g = std::move(b.g);
  const std::vector<HostTensor> calibration = inputs_of(g, 1);
  const std::vector<HostTensor> values = ref_values(g, calibration);
  const PlanQuantization q = calibrate_ranges(g, values, "minmax");
  const Graph ranged = with_calibrated_ranges(g, q.ranges);
  REQUIRE(g.nodes[0].op == "Conv");
  REQUIRE(g.nodes[2].op == "Conv");

  const DataflowIndex index(ranged);
  SearchProblem problem;
  problem.index = &index;
  problem.candidates.push_back(Candidate{SubGraph(index, IndexSet(static_cast<int>(ranged.nodes.size()), {0, 1, 2, 3})), "onednn_int8", "test", {}});
  Int8CandidateErrors errors(ranged, values);
  const double e = errors.end_to_end_error(problem, 0);
  const double sum = errors.anchor_error("onednn_int8", 0) + errors.anchor_error("onednn_int8", 2);

  // Independently: the whole graph in onednn_int8 with only the two convs' sources ranged (the
  // Gemm then runs f32, as ref downstream would).
  CalibratedRanges convs;
  for (const auto& r : q.ranges)
    if (r.first == g.value(x).name || r.first == g.value(r0).name) convs.push_back(r);
  REQUIRE(convs.size() == 2);
  const Graph two = with_calibrated_ranges(g, convs);
  const std::vector<HostTensor> in = inputs_of(g, 1);
  HostTensor out(g.value(g.outputs[0]).type);
  std::vector<ConstTensorView> views;
  for (const HostTensor& t : in) views.push_back(t.view());
  std::vector<TensorView> outs{out.view()};
  make_backend_compiler("onednn_int8")->compile(two)->run(views, outs);
  const double whole = relative_l2_error(out, values[static_cast<size_t>(g.outputs[0])]);
  INFO("end_to_end_error " << e << ", whole " << whole << ", anchors summed " << sum);
  CHECK(e > 1e-4);
  CHECK(e == Approx(whole).epsilon(0.05).margin(1e-5));
  CHECK(std::abs(e - sum) > 0.05 * sum);
}

// A conv's bias (and bias shift) in accumulator units is the primitive's own bias argument, one
// host step per conv ((b - shift) / (sx * sw[o]) per channel), leaving one per-channel post-op
// (the scale): the same numbers within float rounding.
TEST_CASE("onednn_int8: a conv's bias runs as the primitive's bias, in accumulator units") {
  FunctionBuilder b;
  const ValueId x = b.input("x", kShape);
  const ValueId r = b.node("Relu", {conv(b, x, "0")}, kShape);
  b.output(conv(b, r, "1"));
  const Graph g = ranged(std::move(b.g));
  const onednn::OnednnProgram p(g, dnnl::engine(dnnl::engine::kind::cpu, 0), onednn::Precision::int8);
  const std::vector<std::string> impls = p.implementations();
  CHECK(std::count(impls.begin(), impls.end(), std::string("host:bias_to_accumulator")) == 2);
  const double on_calibration = error_on(g, 1), held_out = error_on(g, 101);
  INFO("calibration " << on_calibration << ", held out " << held_out);
  CHECK(on_calibration > 1e-4);
  CHECK(on_calibration < 0.02);
  CHECK(held_out < 0.04);
}

// A transformer's MatMul against 2-D weights ([1, S, H] x [H, N], then its bias Add and a Relu):
// its rows fold into one rank-2 GEMM, [S, H] x [H, N], whose s8 weights oneDNN lays out in its
// blocks once, with the bias Add's operand folded the same way.
TEST_CASE("onednn_int8: a batched MatMul against 2-D weights runs as one rank-2 GEMM") {
  FunctionBuilder b;
  const Shape xs{1, 24, 32}, ys{1, 24, 48};
  const ValueId x = b.input("x", xs);
  const ValueId mm = b.node("MatMul", {x, b.input("w", {32, 48})}, ys);
  b.output(b.node("Relu", {b.node("Add", {mm, b.input("bias", {48})}, ys)}, ys));
  // x ranged only: w is a function input here, as an outlined function's weights are (a model's
  // weights are constants, never ranged as a computed right operand).
  CalibratedRanges only_x;
  for (const auto& r : calibrate_ranges(b.g, ref_values(b.g, inputs_of(b.g, 1)), "minmax").ranges)
    if (r.first == b.g.value(x).name) only_x.push_back(r);
  REQUIRE(only_x.size() == 1);
  const Graph g = with_calibrated_ranges(b.g, only_x);
  const onednn::OnednnProgram p(g, dnnl::engine(dnnl::engine::kind::cpu, 0), onednn::Precision::int8);
  const std::vector<std::string> impls = p.implementations();
  const std::vector<onednn::Dims> dims = p.dst_dims();
  REQUIRE(impls.size() == dims.size());
  int gemms = 0;
  for (size_t i = 0; i < impls.size(); ++i)
    if (impls[i].rfind("matmul:", 0) == 0) {
      ++gemms;
      CHECK(dims[i] == onednn::Dims{24, 48});
    }
  CHECK(gemms == 1);
  const double on_calibration = error_on(g, 1), held_out = error_on(g, 101);
  INFO("calibration " << on_calibration << ", held out " << held_out);
  CHECK(on_calibration > 1e-4);
  CHECK(on_calibration < 0.02);
  CHECK(held_out < 0.04);
}

// The same MatMul with a bias shift on its output (bias correction): the per-column scale runs as
// the matmul's output scales and the shift as its bias in accumulator units (one host step),
// no per-column post-op; the result moves by exactly the shift.
TEST_CASE("onednn_int8: a MatMul's bias shift is its bias in accumulator units") {
  FunctionBuilder b;
  const Shape xs{1, 24, 32}, ys{1, 24, 48};
  const ValueId x = b.input("x", xs);
  const ValueId mm = b.node("MatMul", {x, b.input("w", {32, 48})}, ys);
  b.output(mm);
  CalibratedRanges only_x;
  for (const auto& r : calibrate_ranges(b.g, ref_values(b.g, inputs_of(b.g, 1)), "minmax").ranges)
    if (r.first == b.g.value(x).name) only_x.push_back(r);
  const Graph plain = with_calibrated_ranges(b.g, only_x);
  Graph shifted = plain;
  std::vector<float> shift(48);
  for (size_t i = 0; i < shift.size(); ++i) shift[i] = 0.01f * static_cast<float>(i) - 0.2f;
  shifted.value(mm).int8_bias_shift = shift;
  const onednn::OnednnProgram p(shifted, dnnl::engine(dnnl::engine::kind::cpu, 0), onednn::Precision::int8);
  const std::vector<std::string> impls = p.implementations();
  CHECK(std::count(impls.begin(), impls.end(), std::string("host:bias_to_accumulator")) == 1);
  auto run = [](const Graph& g) {
    const std::vector<HostTensor> in = inputs_of(g, 1);
    HostTensor out(g.value(g.outputs[0]).type);
    std::vector<ConstTensorView> views;
    for (const HostTensor& t : in) views.push_back(t.view());
    std::vector<TensorView> outs{out.view()};
    make_backend_compiler("onednn_int8")->compile(g)->run(views, outs);
    return out;
  };
  const HostTensor a = run(plain), c = run(shifted);
  const auto av = a.as<float>(), cv = c.as<float>();
  REQUIRE(av.size() == cv.size());
  double worst = 0;
  for (size_t i = 0; i < av.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(av[i] - shift[i % 48] - cv[i])));
  CHECK(worst < 1e-4);
  CHECK(error_on(plain, 1) < 0.02);
}
