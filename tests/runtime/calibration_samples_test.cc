// Calibration files holding several samples along axis 0, and a budget verified on all of them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "runtime/budgeted_partition.h"
#include "runtime/calibration_samples.h"
#include "tessera/error.h"
#include "tessera/model_loader.h"

using namespace tessera;

namespace {

HostTensor counting(const Shape& shape, float from) {
  HostTensor t(TensorType{DType::f32, shape});
  float* p = reinterpret_cast<float*>(t.bytes.data());
  for (int64_t i = 0; i < t.type.numel(); ++i) p[i] = from + static_cast<float>(i);
  return t;
}

float at(const HostTensor& t, int64_t i) { return reinterpret_cast<const float*>(t.bytes.data())[i]; }

// conv_block (x: f32[1, 8, 16, 16]) with a second graph input y2: f32[1, 4].
Graph conv_block_with_y2() {
  Graph g = load_model("data/models/conv_block.json");
  Value y;
  y.name = "y2";
  y.type = TensorType{DType::f32, {1, 4}};
  y.kind = ValueKind::Input;
  g.inputs.push_back(g.add_value(y));
  return g;
}

}  // namespace

TEST_CASE("calibration_samples: K samples stacked along axis 0, one sample as it is") {
  const Graph g = load_model("data/models/conv_block.json");   // x: f32[1, 8, 16, 16]
  const int64_t n = 8 * 16 * 16;
  SECTION("one sample") {
    const auto s = calibration_samples(g, {{"x", counting({1, 8, 16, 16}, 0)}});
    REQUIRE(s.size() == 1);
    CHECK(at(s[0].at("x"), 5) == 5.0f);
  }
  SECTION("three samples") {
    const auto s = calibration_samples(g, {{"x", counting({3, 8, 16, 16}, 0)}});
    REQUIRE(s.size() == 3);
    for (int64_t k = 0; k < 3; ++k) {
      CHECK(s[static_cast<size_t>(k)].at("x").type == (TensorType{DType::f32, {1, 8, 16, 16}}));
      CHECK(at(s[static_cast<size_t>(k)].at("x"), 0) == static_cast<float>(k * n));
    }
  }
  SECTION("nothing given: kSeededSamples samples, the odd ones' inputs standard normal") {
    const auto s = calibration_samples(g, {});
    CHECK(s.size() == static_cast<size_t>(kSeededSamples));
    CHECK(kSeededSamples >= 4);
    for (size_t k = 0; k < s.size(); ++k) CHECK(s[k].size() == k % 2);   // even: model_inputs' uniform
  }
  SECTION("a file that fits neither form is passed on whole") {
    const auto s = calibration_samples(g, {{"x", counting({3, 8, 16, 15}, 0)}});
    REQUIRE(s.size() == 1);
    CHECK(s[0].at("x").type.shape == Shape{3, 8, 16, 15});
  }
}

TEST_CASE("calibration_samples: inputs with different sample counts are a user error naming calibration") {
  const Graph g = conv_block_with_y2();
  CHECK_THROWS_WITH(calibration_samples(g, {{"x", counting({2, 8, 16, 16}, 0)}, {"y2", counting({3, 4}, 0)}}),
                    Catch::Contains("calibration") && Catch::Contains("samples"));
  const auto s = calibration_samples(g, {{"x", counting({2, 8, 16, 16}, 0)}, {"y2", counting({1, 4}, 7)}});
  REQUIRE(s.size() == 2);
  CHECK(at(s[1].at("y2"), 0) == 7.0f);   // one sample of y2, in every sample
}

TEST_CASE("calibration_samples: an input seeded random gives several samples, the given one the same in each") {
  const Graph g = conv_block_with_y2();
  const auto s = calibration_samples(g, {{"x", counting({1, 8, 16, 16}, 3)}});
  REQUIRE(s.size() == static_cast<size_t>(kSeededSamples));
  for (size_t k = 0; k < s.size(); ++k) {
    CHECK(at(s[k].at("x"), 0) == 3.0f);
    CHECK(s[k].count("y2") == k % 2);   // seeded: uniform from model_inputs (even k), standard normal (odd k)
  }
  // Every input given, one sample each: one sample, as given.
  CHECK(calibration_samples(g, {{"x", counting({1, 8, 16, 16}, 3)}, {"y2", counting({1, 4}, 0)}}).size() == 1);
}

TEST_CASE("PlanErrorCheck: seeded calibration verifies on several different samples") {
  const Graph g = load_model("data/models/conv_block.json");
  AccuracyBudget seeded;
  seeded.max_rel_error = 0.01;
  const PlanErrorCheck check(g, seeded);
  CHECK(check.samples() == static_cast<size_t>(kSeededSamples));
}

TEST_CASE("sample_bound: the largest sample error, raised by the samples' spread") {
  CHECK(sample_bound({}) == 0.0);
  CHECK(sample_bound({0.004}) == 0.004);
  CHECK(sample_bound({0.005, 0.005, 0.005}) == Approx(0.005));
  // efficientnet_b0's three draws and one more: mean 0.00868, sd 0.00148; mean + 2 sd 0.01164 > the largest.
  const std::vector<double> e{0.00726, 0.00896, 0.0107, 0.0078};
  const double mean = (0.00726 + 0.00896 + 0.0107 + 0.0078) / 4;
  double ss = 0;
  for (double x : e) ss += (x - mean) * (x - mean);
  CHECK(sample_bound(e) == Approx(mean + kSampleSpread * std::sqrt(ss / 3)));
  CHECK(sample_bound(e) > 0.0107);
  // One far-off sample: the largest stays the bound where it exceeds mean + 2 sd.
  CHECK(sample_bound({0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.02}) == 0.02);
  CHECK(std::isinf(sample_bound({0.001, INFINITY})));
}

TEST_CASE("PlanErrorCheck: the int8 ranges span every sample") {
  const Graph g = load_model("data/models/conv_block.json");
  AccuracyBudget one, three;
  one.max_rel_error = three.max_rel_error = 0.01;
  HostTensor x = counting({3, 8, 16, 16}, 0);
  float* p = reinterpret_cast<float*>(x.bytes.data());
  const int64_t n = 8 * 16 * 16;
  for (int64_t i = 0; i < 3 * n; ++i) p[i] = (i < n ? 1.0f : i < 2 * n ? 4.0f : -2.0f) * std::sin(0.01f * static_cast<float>(i));
  HostTensor first(TensorType{DType::f32, {1, 8, 16, 16}});
  std::memcpy(first.bytes.data(), x.bytes.data(), first.bytes.size());
  one.calibration.emplace("x", first);
  three.calibration.emplace("x", x);
  const PlanErrorCheck a(g, one), b(g, three);
  CHECK(a.samples() == 1);
  CHECK(b.samples() == 3);
  const auto range_of = [](const PlanQuantization& q, const std::string& v) {
    for (const auto& [name, r] : q.ranges)
      if (name == v) return r;
    FAIL("no range for " << v);
    return std::pair<float, float>{};
  };
  const auto ra = range_of(a.ranges("minmax"), "x"), rb = range_of(b.ranges("minmax"), "x");
  CHECK(ra.second <= 1.0f);
  CHECK(rb.second > 3.9f);    // sample 1 reaches 4
  CHECK(rb.first < -1.9f);    // sample 2 reaches -2
}
