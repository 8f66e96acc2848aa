// onednn: the SiLU host pass (onednn_host_eltwise.h) against x * sigmoid(x) in double precision:
// within 5e-6 relative over [-30, 30] and below (Eigen's rational logistic, the pass before the
// AVX-512 kernel, is 8e-4 off at x = -8.87), the special values, and lengths that leave a tail
// of fewer than 16 values, which must not touch the memory after it.
#include <cmath>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "backends/onednn/onednn_host_eltwise.h"

using tessera::onednn::HostEltwise;
using tessera::onednn::eltwise_in_place;

namespace {

double silu_exact(double x) { return x / (1.0 + std::exp(-x)); }

}  // namespace

TEST_CASE("onednn host SiLU: within 5e-6 of x * sigmoid(x) over the float range", "[onednn][silu]") {
  std::vector<float> x;
  for (int i = -600000; i <= 300000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);   // [-60, 30], step 1e-4
  for (float v = 1e-30f; v < 1e30f; v *= 3.7f) {
    x.push_back(v);
    x.push_back(-v);
  }
  std::vector<float> y = x;
  eltwise_in_place(HostEltwise::silu, y.data(), static_cast<int64_t>(y.size()));
  double worst = 0.0;
  float worst_at = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = silu_exact(x[i]);
    if (std::fabs(want) < 1e-30) {   // below float's normal range: the value is 0 or a denormal
      CHECK(std::fabs(y[i]) < 1e-30);
      continue;
    }
    const double rel = std::fabs(y[i] - want) / std::fabs(want);
    if (rel > worst) {
      worst = rel;
      worst_at = x[i];
    }
  }
  INFO("worst relative error " << worst << " at x = " << worst_at);
  CHECK(worst < 5e-6);
}

TEST_CASE("onednn host SiLU: special values and tails", "[onednn][silu]") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> s{0.0f, -0.0f, inf, std::numeric_limits<float>::quiet_NaN(), -1e30f, 1e30f, 200.0f, -200.0f};
  eltwise_in_place(HostEltwise::silu, s.data(), static_cast<int64_t>(s.size()));
  CHECK(s[0] == 0.0f);
  CHECK(s[1] == 0.0f);
  CHECK(s[2] == inf);
  CHECK(std::isnan(s[3]));
  CHECK(std::fabs(s[4]) < 1e-30f);
  CHECK(s[5] == 1e30f);
  CHECK(s[6] == 200.0f);
  CHECK(std::fabs(s[7]) < 1e-30f);

  for (int64_t n : {1, 15, 16, 17, 37, 100}) {
    std::vector<float> v(static_cast<size_t>(n) + 8, 7.0f);
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) * 0.25f - 5.0f;
    eltwise_in_place(HostEltwise::silu, v.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double want = silu_exact(static_cast<double>(i) * 0.25 - 5.0);
      CHECK(std::fabs(v[static_cast<size_t>(i)] - want) <= 5e-6 * std::fabs(want) + 1e-30);
    }
    for (size_t i = static_cast<size_t>(n); i < v.size(); ++i) CHECK(v[i] == 7.0f);   // past the end: untouched
  }
}
