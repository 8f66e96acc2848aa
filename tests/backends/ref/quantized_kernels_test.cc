// ref's quantized kernels against hand-computed values: the rules ONNX's node tests do not reach
// (ties rounding to even, int8 saturation, NaN, a per-axis scale on a non-default axis, per-channel
// weight zero points, an all-zero DynamicQuantizeLinear input) and the parameters kernels refuse.
#include <catch2/catch.hpp>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/kernel_runner.h"

using namespace tessera;

namespace {

std::vector<HostTensor> run_quant(const std::string& op, Attributes attrs, const std::vector<HostTensor>& inputs,
                                  const std::vector<TensorType>& outputs) {
  return testing::run_ref_kernel(op, std::move(attrs), inputs, outputs);
}

template <typename T>
HostTensor qtensor(DType t, Shape s, std::vector<T> v) { return HostTensor::of<T>(t, std::move(s), v); }

template <typename T>
std::vector<T> qvalues(const HostTensor& t) { return {t.as<T>().begin(), t.as<T>().end()}; }

}  // namespace

TEST_CASE("QuantizeLinear rounds ties to even and saturates to int8") {
  const auto x = qtensor<float>(DType::f32, {8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 1000.0f, -1000.0f, NAN});
  const auto scale = qtensor<float>(DType::f32, {}, {1.0f});
  const auto zp = qtensor<int8_t>(DType::i8, {}, {1});
  const auto y = run_quant("QuantizeLinear", {}, {x, scale, zp}, {{DType::i8, {8}}});
  // round(0.5) = 0, round(1.5) = 2, round(2.5) = 2, round(-0.5) = -0, round(-1.5) = -2; + 1.
  CHECK(qvalues<int8_t>(y[0]) == std::vector<int8_t>{1, 3, 3, 1, -1, 127, -128, 1});
}

TEST_CASE("QuantizeLinear and DequantizeLinear per axis along axis 0 and a negative axis") {
  // x: 2x3, scales per row (axis 0) and per column (axis -1).
  const auto x = qtensor<float>(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const auto rows = qtensor<float>(DType::f32, {2}, {1.0f, 2.0f});
  const auto row_zp = qtensor<uint8_t>(DType::u8, {2}, {10, 20});
  const auto q = run_quant("QuantizeLinear", {{"axis", int64_t{0}}}, {x, rows, row_zp}, {{DType::u8, {2, 3}}});
  // Row 1: 4 / 2 = 2, 5 / 2 = 2.5 rounds to 2, 6 / 2 = 3; plus 20.
  CHECK(qvalues<uint8_t>(q[0]) == std::vector<uint8_t>{11, 12, 13, 22, 22, 23});
  const auto cols = qtensor<float>(DType::f32, {3}, {0.5f, 1.0f, 2.0f});
  const auto d = run_quant("DequantizeLinear", {{"axis", int64_t{-1}}}, {q[0], cols, qtensor<uint8_t>(DType::u8, {3}, {10, 10, 10})},
                     {{DType::f32, {2, 3}}});
  CHECK(qvalues<float>(d[0]) == std::vector<float>{0.5f, 2, 6, 6, 12, 26});
}

TEST_CASE("DequantizeLinear of int32 data without a zero point") {
  const auto x = qtensor<int32_t>(DType::i32, {3}, {-100000, 0, 7});
  const auto d = run_quant("DequantizeLinear", {}, {x, qtensor<float>(DType::f32, {}, {0.5f})}, {{DType::f32, {3}}});
  CHECK(qvalues<float>(d[0]) == std::vector<float>{-50000, 0, 3.5f});
}

TEST_CASE("DynamicQuantizeLinear of an all-zero input: scale 1/255, zero point 0") {
  const auto x = qtensor<float>(DType::f32, {4}, {0, 0, 0, 0});
  const auto y = run_quant("DynamicQuantizeLinear", {}, {x}, {{DType::u8, {4}}, {DType::f32, {}}, {DType::u8, {}}});
  CHECK(qvalues<uint8_t>(y[0]) == std::vector<uint8_t>{0, 0, 0, 0});
  CHECK(qvalues<float>(y[1])[0] == 1.0f / 255.0f);
  CHECK(qvalues<uint8_t>(y[2])[0] == 0);
}

TEST_CASE("ConvInteger subtracts a per-output-channel weight zero point; padding adds nothing") {
  // x 1x1x2x2 = [1 2; 3 4] with zero point 1 -> [0 1; 2 3]; two 1x1x2x2 filters of all 5 and
  // all 2, zero points 4 and 3 -> all 1 and all -1; pads 1 on the right and bottom only.
  const auto x = qtensor<uint8_t>(DType::u8, {1, 1, 2, 2}, {1, 2, 3, 4});
  const auto w = qtensor<uint8_t>(DType::u8, {2, 1, 2, 2}, {5, 5, 5, 5, 2, 2, 2, 2});
  const auto x_zp = qtensor<uint8_t>(DType::u8, {}, {1});
  const auto w_zp = qtensor<uint8_t>(DType::u8, {2}, {4, 3});
  const auto y = run_quant("ConvInteger", {{"pads", std::vector<int64_t>{0, 0, 1, 1}}}, {x, w, x_zp, w_zp},
                     {{DType::i32, {1, 2, 2, 2}}});
  CHECK(qvalues<int32_t>(y[0]) == std::vector<int32_t>{6, 4, 5, 3, -6, -4, -5, -3});
}

TEST_CASE("QLinearMatMul with per-row A scales and per-column B zero points") {
  // A 2x2 u8, zero point 0, scales per row 1 and 2; B 2x2 u8, zero points per column 1 and 0.
  const auto a = qtensor<uint8_t>(DType::u8, {2, 2}, {1, 2, 3, 4});
  const auto b = qtensor<uint8_t>(DType::u8, {2, 2}, {2, 1, 3, 1});  // minus zp -> [1 1; 2 1]
  const auto y = run_quant("QLinearMatMul", {},
                     {a, qtensor<float>(DType::f32, {2}, {1, 2}), qtensor<uint8_t>(DType::u8, {2}, {0, 0}), b,
                      qtensor<float>(DType::f32, {}, {1}), qtensor<uint8_t>(DType::u8, {2}, {1, 0}),
                      qtensor<float>(DType::f32, {}, {4}), qtensor<uint8_t>(DType::u8, {}, {100})},
                     {{DType::u8, {2, 2}}});
  // acc = [5 3; 11 7]; * row scale / 4 -> [1.25 0.75; 5.5 3.5] -> round half even [1 1; 6 4] + 100.
  CHECK(qvalues<uint8_t>(y[0]) == std::vector<uint8_t>{101, 101, 106, 104});
}

TEST_CASE("quantized kernels refuse a zero scale and a per-axis scale of the wrong length") {
  const auto x = qtensor<float>(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK_THROWS_AS(run_quant("QuantizeLinear", {}, {x, qtensor<float>(DType::f32, {}, {0.0f})}, {{DType::u8, {2, 3}}}),
                  KernelError);
  CHECK_THROWS_AS(run_quant("QuantizeLinear", {}, {x, qtensor<float>(DType::f32, {2}, {1, 1})}, {{DType::u8, {2, 3}}}),
                  KernelError);
  const auto q = qtensor<uint8_t>(DType::u8, {3}, {1, 2, 3});
  CHECK_THROWS_AS(run_quant("DequantizeLinear", {}, {q, qtensor<float>(DType::f32, {}, {1}), qtensor<int8_t>(DType::i8, {}, {0})},
                      {{DType::f32, {3}}}),
                  KernelError);
}
