// What a plan made under an accuracy budget with onednn_int8 says about its own error: on how many
// calibration samples it was verified, each one's error and the rule that made the verified error
// of them (PlanAccuracy::samples, sample_errors, bound); that seeded calibration spans normal-scale
// inputs as well as uniform ones; and, where int8 could not be made to hold the budget, which
// convolutions stayed fp32 because the plans that ran them in int8 failed verification, and
// whether the whole plan fell back to fp32 (PlanAccuracy::fallback). Roofline costs: int8 is
// priced below fp32 for these compute-bound convolutions, so only the budget keeps them out.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.h"
#include "backends/onednn/onednn_compiler.h"
#include "runtime/budgeted_partition.h"
#include "runtime/calibration_samples.h"
#include "runtime/npy.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_model.h"
#include "tessera/model_loader.h"
#include "tessera/plan.h"

using namespace tessera;
using tessera::testing::Process;
using tessera::testing::run_command;
using tessera::testing::TempDir;

namespace {

// x f32[1, 32, 32, 32] -> Conv 3x3 -> Relu -> Conv 3x3 -> y, no biases (seeded weights): the output
// scales with the input, so an input far below its calibrated range loses its signal in int8.
const char* kTwoConvs = R"({"format": "tessera.graph", "version": 1, "name": "two_convs", "opset": 17,
 "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 32, 32, 32]}],
 "constants": [{"name": "w0", "dtype": "f32", "shape": [32, 32, 3, 3]}, {"name": "w1", "dtype": "f32", "shape": [32, 32, 3, 3]}],
 "nodes": [{"name": "conv0", "op": "Conv", "inputs": ["x", "w0"], "outputs": ["c0"], "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
           {"name": "relu0", "op": "Relu", "inputs": ["c0"], "outputs": ["r0"]},
           {"name": "conv1", "op": "Conv", "inputs": ["r0", "w1"], "outputs": [{"name": "y", "dtype": "f32", "shape": [1, 32, 32, 32]}],
            "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}}],
 "outputs": ["y"]})";

std::string write_model(const TempDir& dir) {
  const std::string path = dir.file("two_convs.json");
  std::ofstream(path) << kTwoConvs;
  return path;
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(tessera::testing::read_file(path)); }

// Four samples stacked along axis 0: sample 0 standard normal, samples 1-3 the same scaled by 1e-3.
// int8 ranges span all four, so samples 1-3 sit inside one quantization step of the input: each
// anchor's error, measured on sample 0, fits the budget, but every plan running a convolution in
// int8 fails verification on samples 1-3.
HostTensor wide_then_tiny() {
  HostTensor t(TensorType{DType::f32, {4, 32, 32, 32}});
  std::span<float> p = t.as<float>();
  const size_t n = p.size() / 4;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  for (size_t i = 0; i < n; ++i) p[i] = normal(rng);
  for (size_t k = 1; k < 4; ++k)
    for (size_t i = 0; i < n; ++i) p[k * n + i] = p[i] * 1e-3f;
  return t;
}

}  // namespace

TEST_CASE("int8 budget record: the plan says on how many samples its error was verified, each one's error and the rule", "[cli]") {
  TempDir dir;
  const std::string tessera = tessera::testing::tessera_binary(), model = write_model(dir), plan = dir.file("int8.json");
  const std::string common = " --backends ref,onednn,onednn_int8 --cost roofline --max-rel-error 0.05";
  Process r = run_command(tessera + " partition " + model + common + " --plan " + plan);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = read_json(plan);
  const nlohmann::json& a = j["accuracy"];
  REQUIRE(a.contains("samples"));
  CHECK(a["samples"] == kSeededSamples);   // seeded calibration: four samples
  REQUIRE(a["sample_errors"].size() == static_cast<size_t>(kSeededSamples));
  CHECK(a["bound"] == "max(largest, mean + 2 sd)");
  std::vector<double> errors;
  for (const auto& e : a["sample_errors"]) errors.push_back(e.get<double>());
  CHECK(a["verified_error"].get<double>() == Approx(sample_bound(errors)).epsilon(1e-6));
  CHECK(r.err.find("verified on 4 calibration samples, max(largest, mean + 2 sd) of") != std::string::npos);

  // Read back, written again: the same bytes (the reader keeps every field).
  const Graph g = load_model(model);
  const Plan back = read_plan_file(plan, g);
  REQUIRE(back.accuracy);
  CHECK(back.accuracy->samples == kSeededSamples);
  CHECK(back.accuracy->sample_errors == errors);
  write_plan_file(dir.file("again.json"), back, g);
  CHECK(tessera::testing::read_file(dir.file("again.json")) == tessera::testing::read_file(plan));

  // Seeded calibration spans normal-scale inputs: x's range reaches well past uniform's [-1, 1).
  bool x_ranged = false;
  for (const auto& range : j["quantization"]["ranges"])
    if (range[0] == "x") {
      x_ranged = true;
      CHECK(range[1].get<double>() < -3.0);
      CHECK(range[2].get<double>() > 3.0);
    }
  CHECK(x_ranged);

  // One given sample: samples 1, the largest.
  HostTensor one(TensorType{DType::f32, {1, 32, 32, 32}});
  one.as<float>()[0] = 1.0f;
  for (size_t i = 1; i < one.as<float>().size(); ++i) one.as<float>()[i] = std::sin(static_cast<float>(i));
  write_npy(dir.file("one.npy"), one);
  r = run_command(tessera + " partition " + model + common + " --calibration x=" + dir.file("one.npy") + " --plan " + dir.file("one.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json o = read_json(dir.file("one.json"))["accuracy"];
  CHECK(o["samples"] == 1);
  CHECK(o["bound"] == "largest");
  CHECK(o["verified_error"] == o["sample_errors"][0]);
}

TEST_CASE("calibration_samples: seeded samples come in both scales, uniform and standard normal") {
  TempDir dir;
  const Graph g = load_model(write_model(dir));
  const auto s = calibration_samples(g, {});
  REQUIRE(s.size() == static_cast<size_t>(kSeededSamples));
  for (size_t k = 0; k < s.size(); ++k) {
    INFO("sample " << k);
    if (k % 2 == 0) {   // uniform [-1, 1): model_inputs seeds it
      CHECK(s[k].empty());
      continue;
    }
    REQUIRE(s[k].count("x"));
    double sum = 0, sq = 0, most = 0;
    for (float v : s[k].at("x").as<float>()) {
      sum += v;
      sq += static_cast<double>(v) * v;
      most = std::max(most, std::fabs(static_cast<double>(v)));
    }
    const double n = static_cast<double>(s[k].at("x").type.numel());
    CHECK(std::fabs(sum / n) < 0.02);
    CHECK(std::sqrt(sq / n) == Approx(1.0).epsilon(0.02));
    CHECK(most > 3.5);
  }
  CHECK(s[1].at("x").bytes != s[3].at("x").bytes);
  CHECK(calibration_samples(g, {}, 0)[1].at("x").bytes == s[1].at("x").bytes);   // seeded: the same every time
  CHECK(calibration_samples(g, {}, 1)[1].at("x").bytes != s[1].at("x").bytes);
}

TEST_CASE("int8 budget record: convolutions kept fp32 by failed verification say so, in the plan and on stderr", "[cli]") {
  TempDir dir;
  const std::string tessera = tessera::testing::tessera_binary(), model = write_model(dir), plan = dir.file("plan.json");
  write_npy(dir.file("cal.npy"), wide_then_tiny());
  Process r = run_command(tessera + " partition " + model + " --backends ref,onednn,onednn_int8 --cost roofline --max-rel-error 0.05" +
                          " --calibration x=" + dir.file("cal.npy") + " --plan " + plan);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = read_json(plan);
  for (const auto& p : j["partitions"]) CHECK(p["backend"] != "onednn_int8");
  const nlohmann::json& a = j["accuracy"];
  CHECK(a["samples"] == 4);
  REQUIRE(a.contains("stayed_fp32"));
  REQUIRE(a["stayed_fp32"].size() == 2);
  for (const auto& [node, why] : a["stayed_fp32"].get<std::vector<std::pair<std::string, std::string>>>()) {
    INFO(node << ": " << why);
    CHECK((node == "conv0" || node == "conv1"));
    CHECK(why.rfind("failed verification: round ", 0) == 0);
    CHECK(why.find("> target 0.04") != std::string::npos);
  }
  CHECK(r.err.find("2 failed verification, e.g. conv") != std::string::npos);
}

TEST_CASE("int8 budget record: when no round holds, the fp32 plan says it fell back and why") {
  TempDir dir;
  const Graph g = load_model(write_model(dir));
  const auto roofline = make_cost_model("roofline");
  AccuracyBudget budget;
  budget.max_rel_error = 0.05;
  budget.calibration.emplace("x", wide_then_tiny());
  budget.max_rounds = 1;   // the round running int8 fails, and there is no other
  const PartitionOutcome out = partition_within_budget(
      g, {builtin_backend_spec("ref"), builtin_backend_spec("onednn"), builtin_backend_spec("onednn_int8")}, *roofline, {}, budget);
  for (const Partition& p : out.plan.partitions) CHECK(p.backend != "onednn_int8");
  REQUIRE(out.plan.accuracy);
  const PlanAccuracy& a = *out.plan.accuracy;
  INFO(a.fallback);
  CHECK(a.fallback.rfind("every round's plan failed verification: 1 round, the least error ", 0) == 0);
  CHECK(a.fallback.find("> target 0.04") != std::string::npos);
  CHECK(a.rounds == 2);   // the failing round and the fp32 plan's
  REQUIRE(a.stayed_fp32.size() == 2);
  for (const auto& [node, why] : a.stayed_fp32) CHECK(why.rfind("failed verification: round 1's plan ran it in int8", 0) == 0);
  CHECK(a.samples == 4);
  CHECK(a.verified_error < 1e-5);   // fp32's own rounding
}

// int8 and bf16 offered, int8 failing verification as above, measured costs (bf16's errors
// measured, so it can fit the budget): the plan runs the convolutions in bf16, which is not fp32,
// and stayed_fp32 lists neither (it lists what runs in fp32).
TEST_CASE("int8 budget record: a convolution the plan runs in bf16 is not listed as stayed fp32", "[cli]") {
  std::string why;
  if (!cpu_has_native_bf16(&why)) {
    WARN("onednn_bf16 is unavailable here (" << why << "): nothing to check");
    return;
  }
  TempDir dir;
  const std::string tessera = tessera::testing::tessera_binary(), model = write_model(dir), plan = dir.file("plan.json");
  write_npy(dir.file("cal.npy"), wide_then_tiny());
  Process r = run_command(tessera + " partition " + model + " --backends ref,onednn_bf16,onednn_int8 --cost measure --cache " +
                          dir.file("costs.db") + " --max-rel-error 0.05 --calibration x=" + dir.file("cal.npy") + " --plan " + plan);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = read_json(plan);
  std::set<std::string> in_bf16;
  for (const auto& p : j["partitions"])
    if (p["backend"] == "onednn_bf16")
      for (const auto& n : p["nodes"]) in_bf16.insert(n.get<std::string>());
  REQUIRE(in_bf16.count("conv0") + in_bf16.count("conv1") > 0);
  if (j["accuracy"].contains("stayed_fp32"))
    for (const auto& entry : j["accuracy"]["stayed_fp32"]) CHECK(in_bf16.count(entry[0].get<std::string>()) == 0);
}
