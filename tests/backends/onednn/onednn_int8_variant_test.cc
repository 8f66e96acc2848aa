// onednn_int8 (the int8 precision variant) against ref: close to fp32 but not equal (int8 really
// runs) on a small conv chain and a Gemm, refused without calibrated ranges; the accuracy budget
// with it end to end through the CLI: the budget holds on held-out inputs, E = 0 is byte-identical
// to the fp32 plan, and the plan's ranges round-trip through its JSON. The pieces that decide how
// much of a model fits a budget: the weights' clipped scales, "mse" ranges, the budget's growth.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "support/files.h"
#include "backends/onednn/int8_test_inputs.h"
#include "backends/compilers/backend_compiler.h"
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_program.h"
#include "backends/onednn/onednn_weight_quant.h"
#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "ir/calibrated_ranges.h"
#include "runtime/budgeted_partition.h"
#include "runtime/int8_calibration.h"
#include "runtime/npy.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "tessera/error.h"
#include "tessera/model_loader.h"
#include "tessera/plan.h"

using namespace tessera;
using tessera::testing::inputs_of;
using tessera::testing::ref_values;
using tessera::testing::FunctionBuilder;
using tessera::testing::Process;
using tessera::testing::run_command;
using tessera::testing::TempDir;
using I = std::vector<int64_t>;

namespace {

// x -> Conv 3x3 -> Relu -> Conv 3x3 (+ residual x) -> Relu -> GlobalAveragePool -> Flatten -> Gemm
Graph conv_chain() {
  FunctionBuilder b;
  const Shape xs{1, 16, 12, 12};
  const ValueId x = b.input("x", xs);
  const ValueId w0 = b.input("w0", {16, 16, 3, 3}), b0 = b.input("b0", {16});
  const ValueId w1 = b.input("w1", {16, 16, 3, 3}), b1 = b.input("b1", {16});
  const ValueId wf = b.input("wf", {10, 16}), bf = b.input("bf", {10});
  const ValueId c0 = b.node("Conv", {x, w0, b0}, xs, {{"pads", I{1, 1, 1, 1}}});
  const ValueId r0 = b.node("Relu", {c0}, xs);
  const ValueId c1 = b.node("Conv", {r0, w1, b1}, xs, {{"pads", I{1, 1, 1, 1}}});
  const ValueId a = b.node("Add", {c1, x}, xs);
  const ValueId r1 = b.node("Relu", {a}, xs);
  const ValueId p = b.node("GlobalAveragePool", {r1}, {1, 16, 1, 1});
  const ValueId f = b.node("Flatten", {p}, {1, 16});
  b.output(b.node("Gemm", {f, wf, bf}, {1, 10}, {{"transB", int64_t{1}}}));
  return std::move(b.g);
}

// MobileNetV2's first units: stem Conv 3x3 stride 2 + ReLU6 -> depthwise 3x3 + ReLU6 -> 1x1 Conv
// -> 1x1 Conv + ReLU6 -> depthwise stride 2 + ReLU6 -> 1x1 Conv.
Graph mobilenet_units() {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 3, 32, 32});
  tessera::testing::MobileNetConv conv{b};
  ValueId y = conv(x, 3, 32, 3, 2, 1, 16, true, "0");
  y = conv(y, 32, 32, 3, 1, 32, 16, true, "1");
  y = conv(y, 32, 16, 1, 1, 1, 16, false, "2");
  y = conv(y, 16, 96, 1, 1, 1, 16, true, "3");   // a source with negative values: a zero point, then a fused ReLU6
  y = conv(y, 96, 96, 3, 2, 96, 8, true, "4");
  b.output(conv(y, 96, 24, 1, 1, 1, 8, false, "5"));
  return std::move(b.g);
}

double int8_error(const Graph& ranged, const std::vector<HostTensor>& in) {
  const HostTensor out = tessera::testing::run_function(*make_backend_compiler("onednn_int8")->compile(ranged), ranged, in);
  return relative_l2_error(out, ref_values(ranged, in)[static_cast<size_t>(ranged.outputs[0])]);
}

int count_partitions(const nlohmann::json& j, const std::string& backend) {
  int n = 0;
  for (const auto& p : j["partitions"]) n += p["backend"] == backend ? 1 : 0;
  return n;
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(tessera::testing::read_file(path)); }

}  // namespace

TEST_CASE("onednn_int8: a conv chain and a Gemm run in int8, close to fp32 on calibration and held-out inputs") {
  const Graph g = conv_chain();
  const std::vector<HostTensor> calibration = inputs_of(g, 1);
  const PlanQuantization q = calibrate_ranges(g, ref_values(g, calibration), "minmax");
  REQUIRE(q.ranges.size() == 3);   // x, the first Relu's output, the Gemm's source
  const Graph ranged = with_calibrated_ranges(g, q.ranges);
  const double on_calibration = int8_error(ranged, calibration);
  const double held_out = int8_error(ranged, inputs_of(g, 101));
  INFO("calibration " << on_calibration << ", held out " << held_out);
  CHECK(on_calibration > 1e-4);   // int8 really runs: fp32 oneDNN is ~1e-6 from ref
  CHECK(on_calibration < 0.03);
  CHECK(held_out < 0.05);
  // The fp32 onednn on the same function: far closer.
  CHECK(make_backend_compiler("onednn_int8")->precision() == "int8");
}

TEST_CASE("onednn_int8: MobileNetV2's units (ReLU6, depthwise, strides) in one function stay close to fp32") {
  const Graph g = mobilenet_units();
  const std::vector<HostTensor> calibration = inputs_of(g, 1);
  const PlanQuantization q = calibrate_ranges(g, ref_values(g, calibration), "minmax");
  REQUIRE(q.ranges.size() == 6);
  const Graph ranged = with_calibrated_ranges(g, q.ranges);
  const double e = int8_error(ranged, calibration);
  INFO("error " << e);
  CHECK(e > 1e-4);
  CHECK(e < 0.05);
}

// The memory plan (onednn_memory_plan.h): the weight step lists the s8 weights and scales it
// writes as sources, so they stay where they are and hold from run to run (quantized once per
// weights pointer), while the u8 and f32 values of a conv chain share one arena.
TEST_CASE("onednn_int8: a conv chain's activations share one arena; weights quantized once hold between runs") {
  FunctionBuilder b;
  const Shape xs{1, 16, 32, 32};
  const ValueId x = b.input("x", xs);
  ValueId h = x;
  for (int k = 0; k < 6; ++k) {
    const std::string n = std::to_string(k);
    const ValueId c = b.node("Conv", {h, b.input("w" + n, {16, 16, 3, 3}), b.input("b" + n, {16})}, xs, {{"pads", I{1, 1, 1, 1}}});
    h = b.node("Relu", {k == 3 ? b.node("Add", {c, x}, xs) : c}, xs);   // one residual sum
  }
  b.output(h);
  const Graph g = std::move(b.g);
  const std::vector<HostTensor> calibration = inputs_of(g, 1);
  const Graph ranged = with_calibrated_ranges(g, calibrate_ranges(g, ref_values(g, calibration), "minmax").ranges);

  const auto run = [&](CompiledFunction& f, const std::vector<HostTensor>& in) { return tessera::testing::run_function(f, ranged, in); };
  const auto same = [](const HostTensor& a, const HostTensor& b) {
    return a.type == b.type && std::ranges::equal(a.as<float>(), b.as<float>());
  };
  auto compiled = make_backend_compiler("onednn_int8")->compile(ranged);
  std::vector<HostTensor> in = calibration;
  const HostTensor first = run(*compiled, in);
  CHECK(same(run(*compiled, in), first));   // the weights' step skipped: its buffers held
  // Another source in the same tensor (the weights' pointers unchanged): as a fresh compile.
  const HostTensor other = HostTensor::random(in[0].type, 77);
  std::ranges::copy(other.as<float>(), in[0].as<float>().begin());
  const HostTensor again = run(*compiled, in);
  CHECK(same(again, run(*make_backend_compiler("onednn_int8")->compile(ranged), in)));
  const double e = relative_l2_error(again, ref_values(ranged, in)[static_cast<size_t>(ranged.outputs[0])]);
  INFO("error " << e);
  CHECK(e < 0.1);

  // At most six u8 sources and six f32 results of 16x32x32 (values between the convs stay u8:
  // onednn_int8_chain.h); one allocation each without the plan.
  const size_t activations = 6 * 5 * static_cast<size_t>(ranged.value(x).type.numel());
  const size_t workspace = onednn::OnednnProgram(ranged, dnnl::engine(dnnl::engine::kind::cpu, 0), onednn::Precision::int8).workspace_bytes();
  INFO("workspace " << workspace << " bytes, activations " << activations);
  CHECK(workspace < activations / 2);
}

TEST_CASE("onednn_int8: a function without calibrated ranges is refused with the reason") {
  const Graph g = conv_chain();
  try {
    make_backend_compiler("onednn_int8")->compile(g);
    FAIL("compiled without ranges");
  } catch (const KernelUnsupported& e) {
    CHECK(std::string(e.what()).find("calibrated source range") != std::string::npos);
  }
}

TEST_CASE("calibrate_ranges: percentile ranges lie inside min/max; a bad method is a user error") {
  const Graph g = conv_chain();
  const std::vector<HostTensor> values = ref_values(g, inputs_of(g, 1));
  const PlanQuantization mm = calibrate_ranges(g, values, "minmax"), pc = calibrate_ranges(g, values, "percentile:99");
  REQUIRE(mm.ranges.size() == pc.ranges.size());
  for (size_t i = 0; i < mm.ranges.size(); ++i) {
    CHECK(pc.ranges[i].second.first >= mm.ranges[i].second.first);
    CHECK(pc.ranges[i].second.second <= mm.ranges[i].second.second);
  }
  CHECK(pc.ranges[0].second.second < mm.ranges[0].second.second);
  CHECK_THROWS_AS(calibrate_ranges(g, values, "percentile:20"), UserError);
  CHECK_THROWS_AS(calibrate_ranges(g, values, "maxmin"), UserError);
}

TEST_CASE("onednn_int8 under --max-rel-error: the budget holds on held-out inputs, E = 0 is the fp32 plan, ranges round-trip", "[cli]") {
  TempDir dir;
  // conv_block at 32 channels and 32x32: large enough that its convolutions are compute-bound,
  // where the roofline prices int8 at VNNI rates below f32.
  std::string text = tessera::testing::read_file("data/models/conv_block.json");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"[8, 8, 3, 3]", "[32, 32, 3, 3]"}, {"\"shape\": [8]", "\"shape\": [32]"}, {"[1, 8, 16, 16]", "[1, 32, 32, 32]"}})
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) text.replace(at, from.size(), to);
  const std::string tessera = tessera::testing::tessera_binary(), model = dir.file("conv_block32.json");
  std::ofstream(model) << text;
  const std::string common = " --cost roofline --cache " + dir.file("costs.db");
  const double E = 0.05;
  const std::string plan = dir.file("int8.json");
  Process r = run_command(tessera + " partition " + model + " --backends ref,onednn,onednn_int8" + common + " --max-rel-error 0.05 --plan " + plan);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("real calibration inputs give truer scales") != std::string::npos);   // seeded calibration: the warning
  const nlohmann::json j = read_json(plan);
  CHECK(count_partitions(j, "onednn_int8") >= 1);          // int8 priced at VNNI rates wins the roofline
  REQUIRE(j.contains("accuracy"));
  CHECK(j["accuracy"]["verified_error"].get<double>() <= E);
  CHECK(j["accuracy"]["verified_error"].get<double>() > 1e-4);
  REQUIRE(j.contains("quantization"));
  CHECK(j["quantization"]["method"] == "minmax");
  CHECK(j["quantization"]["ranges"].size() == 2);          // x and conv1's source

  // Held-out inputs (another seed than the calibration's 0): run --check against ref.
  const Graph g = load_model(model);
  HostTensor x = HostTensor::random(g.value(g.inputs[0]).type, 12345);
  write_npy(dir.file("x.npy"), x);
  r = run_command(tessera + " run " + model + " --plan " + plan + " --check --repeat 1 --json --input x=" + dir.file("x.npy"));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json check = nlohmann::json::parse(r.out);
  CHECK(check["rel_error"].get<double>() > 1e-4);   // the int8 functions ran, ranges and all
  CHECK(check["rel_error"].get<double>() <= E);

  // The plan's JSON reads back with the same ranges, float for float, and writes the same bytes.
  const Plan back = read_plan_file(plan, g);
  REQUIRE(back.quantization);
  REQUIRE(back.quantization->ranges.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(back.quantization->ranges[i].first == j["quantization"]["ranges"][i][0].get<std::string>());
    CHECK(back.quantization->ranges[i].second.first == static_cast<float>(j["quantization"]["ranges"][i][1].get<double>()));
  }
  write_plan_file(dir.file("again.json"), back, g);
  CHECK(tessera::testing::read_file(dir.file("again.json")) == tessera::testing::read_file(plan));

  // E = 0: byte-identical to the plan of the fp32 backends alone.
  r = run_command(tessera + " partition " + model + " --backends ref,onednn,onednn_int8" + common + " --plan " + dir.file("e0.json"));
  REQUIRE(r.exit_code == 0);
  r = run_command(tessera + " partition " + model + " --backends ref,onednn" + common + " --plan " + dir.file("fp32.json"));
  REQUIRE(r.exit_code == 0);
  CHECK(tessera::testing::read_file(dir.file("e0.json")) == tessera::testing::read_file(dir.file("fp32.json")));
  CHECK(tessera::testing::read_file(dir.file("e0.json")).find("quantization") == std::string::npos);
}

namespace {

double rounding_error(const std::vector<float>& w, int64_t c, int64_t per, float step) {
  double e = 0.0;
  for (int64_t i = 0; i < per; ++i) {
    const float x = w[static_cast<size_t>(c * per + i)];
    const double d = static_cast<double>(std::clamp(std::nearbyint(x / step), -127.0f, 127.0f) * step) - x;
    e += d * d;
  }
  return e;
}

}  // namespace

TEST_CASE("onednn_int8 weights: per-channel steps with the least squared rounding error, never more than max / 127") {
  const int64_t channels = 16, per = 4608;   // a 3x3 convolution over 512 channels (resnet18's layer4)
  std::mt19937 rng(11);
  std::student_t_distribution<float> heavy(3.0f);
  std::vector<float> w(static_cast<size_t>(channels * per));
  for (float& x : w) x = 0.05f * heavy(rng);
  std::vector<int8_t> q(w.size());
  std::vector<float> scale(static_cast<size_t>(channels));
  const float act_scale = 0.5f;
  onednn::WeightQuantizer{channels, per, per, 1, act_scale}(w.data(), q.data(), scale.data());
  double chosen = 0.0, plain = 0.0;
  for (int64_t c = 0; c < channels; ++c) {
    float m = 0.0f;
    for (int64_t i = 0; i < per; ++i) m = std::max(m, std::fabs(w[static_cast<size_t>(c * per + i)]));
    const float step = scale[static_cast<size_t>(c)] / act_scale;
    CHECK(step <= m / 127.0f * 1.0001f);
    CHECK(step >= 0.6f * m / 127.0f * 0.9999f);
    const double e = rounding_error(w, c, per, step), e_plain = rounding_error(w, c, per, m / 127.0f);
    CHECK(e <= e_plain);
    chosen += e;
    plain += e_plain;
    for (int64_t i = 0; i < per; ++i) {   // the bytes are the rounding at that step
      const float x = w[static_cast<size_t>(c * per + i)];
      CHECK(q[static_cast<size_t>(c * per + i)] == static_cast<int8_t>(std::clamp(std::nearbyint(x / step), -127.0f, 127.0f)));
    }
  }
  INFO("squared error " << chosen << " against max/127's " << plain);
  CHECK(chosen < 0.99 * plain);   // thousands of weights: a step a little under max / 127 pays
  // A channel of equal magnitudes gains nothing from clipping: max / 127 exactly.
  std::vector<float> flat(static_cast<size_t>(per));
  for (int64_t i = 0; i < per; ++i) flat[static_cast<size_t>(i)] = i % 2 ? 1.0f : -1.0f;
  std::vector<int8_t> fq(flat.size());
  float fs = 0.0f;
  onednn::WeightQuantizer{1, per, per, 1, 1.0f}(flat.data(), fq.data(), &fs);
  CHECK(fs == 1.0f / 127.0f);
}

// The quantizer's rounding without libm (onednn_weight_quant.h): nearbyint's value, ties to even,
// over every quarter step of the range the weights' ratios take and a million random ratios.
TEST_CASE("onednn_int8 weights: round_half_even is nearbyint, ties to even") {
  for (int k = -4 * 220; k <= 4 * 220; ++k) {
    const float x = static_cast<float>(k) * 0.25f;
    INFO(x);
    CHECK(onednn::round_half_even(x) == std::nearbyint(x));
  }
  CHECK(onednn::round_half_even(2.5f) == 2.0f);
  CHECK(onednn::round_half_even(-3.5f) == -4.0f);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> ratio(-215.0f, 215.0f);
  int differ = 0;
  for (int i = 0; i < 1000000; ++i) {
    const float x = ratio(rng);
    differ += onednn::round_half_even(x) != std::nearbyint(x);
  }
  CHECK(differ == 0);
}

TEST_CASE("calibrate_ranges mse: inside min/max, tails clipped only where the finer step pays") {
  const Graph g = conv_chain();
  const std::vector<HostTensor> values = ref_values(g, inputs_of(g, 1));
  const PlanQuantization mm = calibrate_ranges(g, values, "minmax"), ms = calibrate_ranges(g, values, "mse");
  CHECK(ms.method == "mse");
  REQUIRE(mm.ranges.size() == ms.ranges.size());
  for (size_t i = 0; i < mm.ranges.size(); ++i) {
    CHECK(ms.ranges[i].second.first >= mm.ranges[i].second.first);
    CHECK(ms.ranges[i].second.second <= mm.ranges[i].second.second);
    CHECK(ms.ranges[i].second.second >= 0.3f * mm.ranges[i].second.second);
  }
  // The mse-ranged function runs in int8 and stays close to fp32.
  const double e = int8_error(with_calibrated_ranges(g, ms.ranges), inputs_of(g, 1));
  CHECK(e > 1e-4);
  CHECK(e < 0.03);

  // A large heavy-tailed activation (Student's t, 2 degrees of freedom, 200k elements, as after
  // a ReLU): its few extremes are not worth a step 255 times their size; mse clips them.
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 64, 56, 56}), w = b.input("w", {8, 64, 1, 1});
  b.output(b.node("Conv", {x, w}, {1, 8, 56, 56}));
  const Graph big = std::move(b.g);
  std::vector<HostTensor> v(big.values.size());
  v[static_cast<size_t>(x)] = HostTensor(big.value(x).type);
  std::mt19937 rng(5);
  std::student_t_distribution<float> heavy(2.0f);
  for (float& f : v[static_cast<size_t>(x)].as<float>()) f = std::fabs(heavy(rng));
  const auto [lo_mm, hi_mm] = calibrate_ranges(big, v, "minmax").ranges.at(0).second;
  const auto [lo_ms, hi_ms] = calibrate_ranges(big, v, "mse").ranges.at(0).second;
  INFO("min/max " << hi_mm << ", mse " << hi_ms);
  CHECK(lo_ms >= 0.0f);
  CHECK(lo_ms <= lo_mm);
  CHECK(hi_ms < 0.9f * hi_mm);
  CHECK(hi_ms >= 0.3f * hi_mm * 0.999f);
}

TEST_CASE("budget_growth: the proxy budget grows by the square of the room left, 1.5x to 8x") {
  // The error of a plan grows like the square root of its proxy (roundings add in quadrature):
  // half the target used -> (0.9 / 0.5)^2 = 3.24x more proxy budget.
  CHECK(budget_growth(0.01, 0.005) == Approx(3.24));
  CHECK(budget_growth(0.009, 0.0065) == Approx(std::pow(0.0081 / 0.0065, 2.0)));
  CHECK(budget_growth(0.01, 1e-6) == 8.0);            // far below: at most 8x a round
  CHECK(budget_growth(0.01, 0.0089) == 1.5);          // a little room: still a real step
  CHECK(budget_growth(0.01, 0.0095) == 1.0);          // none left (within 0.9 of the target): stop
}

TEST_CASE("Int8CandidateErrors::anchor_error: the model's output error with that one convolution or Gemm in int8") {
  const Graph g = conv_chain();
  const std::vector<HostTensor> calibration = inputs_of(g, 1);
  const std::vector<HostTensor> values = ref_values(g, calibration);
  const PlanQuantization q = calibrate_ranges(g, values, "minmax");
  const Graph ranged = with_calibrated_ranges(g, q.ranges);
  Int8CandidateErrors errors(ranged, values);
  int anchors = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    const double e = errors.anchor_error("onednn_int8", static_cast<NodeId>(n));
    if (node.op != "Conv" && node.op != "Gemm") {
      CHECK(e == 0.0);
      continue;
    }
    ++anchors;
    // Independently: the whole function in onednn_int8 with only this node's source ranged, so
    // that it alone runs int8 and everything else f32.
    CalibratedRanges only;
    for (const auto& r : q.ranges)
      if (r.first == g.value(node.inputs[0]).name) only.push_back(r);
    REQUIRE(only.size() == 1);
    const double whole = int8_error(with_calibrated_ranges(g, only), calibration);
    INFO(node.op << " " << node.name << ": anchor_error " << e << ", alone in int8 " << whole);
    CHECK(e > 1e-4);
    CHECK(e == Approx(whole).epsilon(0.05).margin(1e-5));
  }
  CHECK(anchors == 3);
}
