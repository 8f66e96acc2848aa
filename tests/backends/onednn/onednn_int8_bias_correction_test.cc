// Bias correction of int8 anchors (src/runtime/int8_bias_correction.h): the shifts are the mean
// int8 error per output channel, the int8 variant subtracts them (less error on the calibration
// input and on a held-out one), a single-row Gemm gets none, the QDQ model subtracts them too, and
// a budgeted plan records them so that `run` rebuilds exactly what was verified.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "backends/compilers/backend_compiler.h"
#include "backends/compilers/function_builder.h"
#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "emit/qdq_model.h"
#include "ir/calibrated_ranges.h"
#include "runtime/int8_bias_correction.h"
#include "runtime/int8_calibration.h"
#include "runtime/npy.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "tessera/model_loader.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::Process;
using tessera::testing::run_command;
using tessera::testing::TempDir;
using I = std::vector<int64_t>;

namespace {

std::vector<float> normal(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> out(n);
  for (float& x : out) x = d(rng);
  return out;
}

// x -> Relu -> Conv 3x3 (16 -> 16, constant weights and bias): a source with a positive mean,
// so each weight channel's rounding error shifts its whole output channel.
Graph relu_conv() {
  FunctionBuilder b;
  const Shape xs{1, 16, 12, 12};
  const ValueId x = b.input("x", xs);
  const ValueId w = b.constant<float>("w", DType::f32, {16, 16, 3, 3}, normal(16 * 16 * 9, 0.1f, 3));
  const ValueId bias = b.constant<float>("b", DType::f32, {16}, normal(16, 0.1f, 4));
  const ValueId r = b.node("Relu", {x}, xs);
  b.output(b.node("Conv", {r, w, bias}, xs, {{"pads", I{1, 1, 1, 1}}, {"kernel_shape", I{3, 3}}}));
  Graph g = std::move(b.g);
  g.opset = 17;
  return g;
}

std::vector<HostTensor> values_of(const Graph& g, const HostTensor& x) {
  return interpret(g, make_ref_kernels(), {{g.inputs[0], x}});
}

double int8_error(const Graph& ranged, const HostTensor& x) {
  const std::vector<HostTensor> want = values_of(ranged, x);
  HostTensor out(ranged.value(ranged.outputs[0]).type);
  std::vector<ConstTensorView> in{x.view()};
  for (size_t i = 1; i < ranged.inputs.size(); ++i) in.push_back(want[static_cast<size_t>(ranged.inputs[i])].view());
  std::vector<TensorView> outs{out.view()};
  make_backend_compiler("onednn_int8")->compile(ranged)->run(in, outs);
  return relative_l2_error(out, want[static_cast<size_t>(ranged.outputs[0])]);
}

}  // namespace

TEST_CASE("int8 bias correction: per-channel shifts lower a convolution's int8 error, on calibration and held-out inputs") {
  const Graph g = relu_conv();
  const HostTensor cal = HostTensor::random(g.value(g.inputs[0]).type, 1), held = HostTensor::random(g.value(g.inputs[0]).type, 99);
  const std::vector<HostTensor> values = values_of(g, cal);
  const PlanQuantization plain = calibrate_ranges(g, values, "minmax");
  const PlanQuantization corrected = with_int8_bias_shifts(plain, g, values, "onednn_int8");
  REQUIRE(corrected.bias_shifts.size() == 1);
  CHECK(corrected.bias_shifts[0].first == g.value(g.outputs[0]).name);
  REQUIRE(corrected.bias_shifts[0].second.size() == 16);
  CHECK(corrected.ranges == plain.ranges);
  // Extracted as the search extracts it: weights become function inputs, their values from ref.
  const Graph before = with_calibrated_ranges(g, plain), after = with_calibrated_ranges(g, corrected);
  CHECK(after.value(after.outputs[0]).int8_bias_shift == corrected.bias_shifts[0].second);
  const double e0 = int8_error(before, cal), e1 = int8_error(after, cal);
  const double h0 = int8_error(before, held), h1 = int8_error(after, held);
  INFO("calibration " << e0 << " -> " << e1 << ", held out " << h0 << " -> " << h1);
  CHECK(e0 > 1e-4);
  CHECK(e1 < 0.95 * e0);   // one layer: its systematic part only (deeper models compound it)
  CHECK(h1 < h0);
}

TEST_CASE("int8 bias correction: no shift for an output with fewer positions per channel than kMinPositions") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 64});
  const ValueId w = b.constant<float>("w", DType::f32, {8, 64}, normal(8 * 64, 0.1f, 5));
  b.output(b.node("Gemm", {b.node("Relu", {x}, {1, 64}), w}, {1, 8}, {{"transB", int64_t{1}}}));
  const Graph g = std::move(b.g);
  const std::vector<HostTensor> values = values_of(g, HostTensor::random(g.value(g.inputs[0]).type, 1));
  const PlanQuantization q = with_int8_bias_shifts(calibrate_ranges(g, values, "minmax"), g, values, "onednn_int8");
  CHECK(q.ranges.size() == 1);
  CHECK(q.bias_shifts.empty());
}

TEST_CASE("int8 bias correction: the QDQ model subtracts the shift after its anchor") {
  const Graph g = relu_conv();
  const HostTensor cal = HostTensor::random(g.value(g.inputs[0]).type, 1);
  const std::vector<HostTensor> values = values_of(g, cal);
  const PlanQuantization q = with_int8_bias_shifts(calibrate_ranges(g, values, "minmax"), g, values, "onednn_int8");
  const Graph qdq = quantize_anchors(g, q, {1});
  int subs = 0;
  for (const Node& n : qdq.nodes) subs += n.op == "Sub" ? 1 : 0;
  CHECK(subs == 1);
  // ref on the QDQ model lands on the int8 plan's output, closer than the uncorrected QDQ model.
  const HostTensor model = values_of(qdq, cal)[static_cast<size_t>(qdq.outputs[0])];
  PlanQuantization bare = q;
  bare.bias_shifts.clear();
  const Graph plain_qdq = quantize_anchors(g, bare, {1});
  const HostTensor uncorrected = values_of(plain_qdq, cal)[static_cast<size_t>(plain_qdq.outputs[0])];
  const HostTensor fp32 = values[static_cast<size_t>(g.outputs[0])];
  INFO("corrected QDQ vs fp32 " << relative_l2_error(model, fp32) << ", uncorrected " << relative_l2_error(uncorrected, fp32));
  CHECK(relative_l2_error(model, fp32) < relative_l2_error(uncorrected, fp32));
}

TEST_CASE("int8 bias correction through the CLI: the plan records the shifts and run rebuilds the verified plan", "[cli]") {
  TempDir dir;
  // conv_block at 32 channels and 32x32, where the roofline prices int8 below f32 (as in
  // onednn_int8_variant_test), so the plan runs int8 partitions.
  std::ifstream src("data/models/conv_block.json");
  std::string text((std::istreambuf_iterator<char>(src)), {});
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"[8, 8, 3, 3]", "[32, 32, 3, 3]"}, {"\"shape\": [8]", "\"shape\": [32]"}, {"[1, 8, 16, 16]", "[1, 32, 32, 32]"}})
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) text.replace(at, from.size(), to);
  const std::string tessera = tessera::testing::tessera_binary(), model = dir.file("conv_block32.json");
  std::ofstream(model) << text;
  const Graph g = load_model(model);
  write_npy(dir.file("cal.npy"), HostTensor::random(g.value(g.inputs[0]).type, 7));
  const std::string plan = dir.file("int8.json");
  Process r = run_command(tessera + " partition " + model + " --backends ref,onednn,onednn_int8 --cost roofline --max-rel-error 0.05" +
                          " --calibration x=" + dir.file("cal.npy") + " --plan " + plan);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(plan);
  const nlohmann::json j = nlohmann::json::parse(in);
  REQUIRE(j.contains("quantization"));
  REQUIRE(j["quantization"].contains("bias_shifts"));
  CHECK(j["quantization"]["bias_shifts"].size() == 2);   // both convolutions
  int int8_partitions = 0;
  for (const auto& p : j["partitions"]) int8_partitions += p["backend"] == "onednn_int8" ? 1 : 0;
  CHECK(int8_partitions >= 1);
  REQUIRE(j.contains("accuracy"));
  const double verified = j["accuracy"]["verified_error"].get<double>();
  r = run_command(tessera + " run " + model + " --plan " + plan + " --check --repeat 1 --threads 1 --json --input x=" + dir.file("cal.npy"));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const double again = nlohmann::json::parse(r.out)["rel_error"].get<double>();
  CHECK(again == Approx(verified).epsilon(1e-3));   // the same functions, shifts and all
}
