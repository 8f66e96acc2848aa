// Tolerances of --check: relative to magnitude for floats, exact for integers, NaN only matches NaN.
#include <catch2/catch.hpp>

#include <cmath>

#include "runtime/ref_check.h"

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

TEST_CASE("compare_tensors: f16 and bf16 tensors are compared at their format's precision") {
  auto half = [](DType t, std::vector<float> xs) {
    std::vector<uint16_t> bits;
    for (float x : xs) bits.push_back(t == DType::f16 ? float_to_half(x) : float_to_bfloat16(x));
    return HostTensor::of<uint16_t>(t, {static_cast<int64_t>(xs.size())}, bits);
  };
  // 0.5 and 0.502: 4 f16 units apart (2^-11 each), beyond f32's tolerance, within f16's.
  CHECK_FALSE(compare_tensors(HostTensor::of<float>(DType::f32, {1}, {0.502f}), HostTensor::of<float>(DType::f32, {1}, {0.5f})).ok);
  CHECK(compare_tensors(half(DType::f16, {0.502f}), half(DType::f16, {0.5f})).ok);
  CHECK_FALSE(compare_tensors(half(DType::f16, {0.6f}), half(DType::f16, {0.5f})).ok);   // 200 units: a wrong result
  CHECK(compare_tensors(half(DType::bf16, {0.53f}), half(DType::bf16, {0.5f})).ok);
  CHECK_FALSE(compare_tensors(half(DType::bf16, {0.75f}), half(DType::bf16, {0.5f})).ok);
  CHECK(relative_l2_error(half(DType::f16, {1.0f, 2.0f}), half(DType::f16, {1.0f, 2.0f})) == 0.0);
  CHECK(relative_l2_error(half(DType::f16, {0.0f, 2.0f}), half(DType::f16, {1.0f, 2.0f})) == Approx(1.0 / std::sqrt(5.0)));
}
