// Tolerances of --check: relative to magnitude for floats, exact for integers, NaN only matches NaN,
// quantized values within one step per requantization.
#include <catch2/catch.hpp>

#include <cmath>

#include "runtime/ref_check.h"
#include "support/graph_builder.h"

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

TEST_CASE("quantization_steps: one step per requantization a value went through") {
  // Q(x) -> DQ -> Relu -> Q -> DQ -> Relu -> Q -> DQ (three quantizers on the path), and a second
  // branch DQ of the first quantizer alone.
  tessera::testing::GraphBuilder b;
  const ValueId x = b.input("x", {4});
  const ValueId s = b.constant<float>("s", DType::f32, {}, {0.5f});
  const ValueId z = b.constant<uint8_t>("z", DType::u8, {}, {128});
  auto quant = [&](const std::string& name, ValueId in) {
    const ValueId q = b.op("QuantizeLinear", name, {in, s, z}, {4});
    b.g.value(q).type.dtype = DType::u8;
    return q;
  };
  const ValueId q1 = quant("q1", x);
  const ValueId d1 = b.op("DequantizeLinear", "d1", {q1, s, z}, {4});
  const ValueId q2 = quant("q2", b.op("Relu", "r1", {d1}, {4}));
  const ValueId d2 = b.op("DequantizeLinear", "d2", {q2, s, z}, {4});
  const ValueId q3 = quant("q3", b.op("Relu", "r2", {d2}, {4}));
  const ValueId d3 = b.op("DequantizeLinear", "d3", {q3, s, z}, {4});
  const ValueId side = b.op("DequantizeLinear", "side", {q1, s, z}, {4});
  const std::vector<double> steps = quantization_steps(b.g);
  auto at = [&](ValueId v) { return steps[static_cast<size_t>(v)]; };
  CHECK(at(q1) == 1.0);    // the input's own quantization: one step
  CHECK(at(side) == 0.5);
  CHECK(at(q2) == 1.0);    // one group
  CHECK(at(d2) == 0.5);
  CHECK(at(q3) == 2.0);    // two requantizations: two steps
  CHECK(at(d3) == 1.0);
  CHECK(at(b.g.nodes[2].outputs[0]) == 0.0);   // r1: not a quantized value

  // The tolerance holds a value to that many steps, no more.
  HostTensor r = HostTensor::of<float>(DType::f32, {2}, {1.0f, 2.0f});
  Tolerance two_steps;
  two_steps.step = at(d3);
  CHECK(compare_tensors(HostTensor::of<float>(DType::f32, {2}, {2.0f, 2.0f}), r, two_steps).ok);
  CHECK_FALSE(compare_tensors(HostTensor::of<float>(DType::f32, {2}, {2.5f, 2.0f}), r, two_steps).ok);
}
