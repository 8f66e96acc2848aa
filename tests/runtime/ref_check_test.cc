// Tolerances of --check: relative to magnitude for floats, exact for integers, NaN only matches NaN.
#include <catch2/catch.hpp>

#include <cmath>

#include "tessera/ref_check.h"

using namespace tessera;

TEST_CASE("compare_tensors: f32 within rtol/atol passes, beyond fails with the element") {
  HostTensor r = HostTensor::of<float>(DType::f32, {3}, {1.0f, -2.0f, 0.0f});
  HostTensor a = HostTensor::of<float>(DType::f32, {3}, {1.0005f, -2.0f, 5e-5f});
  TensorComparison ok = compare_tensors(a, r);
  CHECK(ok.ok);
  CHECK(ok.max_abs_error == Approx(5e-4).epsilon(1e-2));
  HostTensor b = HostTensor::of<float>(DType::f32, {3}, {1.0f, -2.01f, 0.0f});
  TensorComparison bad = compare_tensors(b, r);
  CHECK_FALSE(bad.ok);
  CHECK(bad.worst == 1);
  CHECK_THAT(bad.reason, Catch::Contains("element 1"));
}

TEST_CASE("compare_tensors: absolute tolerance scales with the tensor's magnitude") {
  HostTensor r = HostTensor::of<float>(DType::f32, {2}, {1000.0f, 0.0f});
  HostTensor a = HostTensor::of<float>(DType::f32, {2}, {1000.0f, 0.05f});   // 0.05 <= 1e-4 * 1000
  CHECK(compare_tensors(a, r).ok);
}

TEST_CASE("compare_tensors: integers exact, NaN matches only NaN, types must agree") {
  HostTensor r = HostTensor::of<int64_t>(DType::i64, {2}, {3, 4});
  CHECK(compare_tensors(HostTensor::of<int64_t>(DType::i64, {2}, {3, 4}), r).ok);
  CHECK_FALSE(compare_tensors(HostTensor::of<int64_t>(DType::i64, {2}, {3, 5}), r).ok);   // off by one: no tolerance
  CHECK_FALSE(compare_tensors(HostTensor::of<int64_t>(DType::i64, {2}, {4, 4}), r).ok);
  // NaN against another NaN (a different payload, too) passes; against a number, or a number
  // against NaN, fails with an infinite error.
  HostTensor n = HostTensor::of<float>(DType::f32, {2}, {NAN, 1.0f});
  CHECK(compare_tensors(HostTensor::of<float>(DType::f32, {2}, {-std::nanf("7"), 1.0f}), n).ok);
  TensorComparison number = compare_tensors(HostTensor::of<float>(DType::f32, {2}, {0.0f, 1.0f}), n);
  CHECK_FALSE(number.ok);
  CHECK(number.worst == 0);
  CHECK(std::isinf(number.max_abs_error));
  CHECK_FALSE(compare_tensors(n, HostTensor::of<float>(DType::f32, {2}, {0.0f, 1.0f})).ok);
  CHECK_FALSE(compare_tensors(HostTensor::of<float>(DType::f32, {2}, {3, 4}), r).ok);
}
