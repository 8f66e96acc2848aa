// Conversions between real and quantized tensors: QuantizeLinear, DequantizeLinear (opset 10:
// per tensor; opset 13: per tensor or per axis) and DynamicQuantizeLinear (opset 11).
//
//   QuantizeLinear(x, scale, zp)    y = saturate(round(x / scale) + zp)   zp's type (uint8 default)
//   DequantizeLinear(q, scale, zp)  y = (q - zp) * scale                  q: uint8, int8, int32
//   DynamicQuantizeLinear(x)        scale = (max(x, 0) - min(x, 0)) / 255  (1 / 255 when both are 0)
//                                   zp = round(saturate(-min(x, 0) / scale)); y as QuantizeLinear
//
// All arithmetic is float32, as ONNX's reference computes it, so that results are bit-exact
// against ONNX's node tests and ONNX Runtime; quant_util.h has the rounding and saturation rules.
// An int32 QuantizeLinear input is converted to float32 first; DequantizeLinear of int32 data
// takes no zero point other than 0 (the bias of QLinearConv is stored so).
#include <algorithm>

#include "backends/ref/quant_util.h"
#include "backends/ref/ref_kernels.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

float as_float(const ConstTensorView& x, int64_t i) {
  return x.type.dtype == DType::f32 ? x.as<float>()[i] : static_cast<float>(x.as<int32_t>()[i]);
}

void quantize_linear_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 3);
  expect_outputs(n, out, 1, 1);
  const ConstTensorView& x = in[0];
  if (x.type.dtype != DType::f32 && x.type.dtype != DType::i32)
    unsupported(n, "input dtype " + std::string(dtype_name(x.type.dtype)) + " (ref: float32, int32)");
  const ConstTensorView zp = has_input(in, 2) ? in[2] : ConstTensorView::missing();
  const QuantParams p = read_quant_params(n, in[1], zp, x.type.shape, attr_int(n.attrs, "axis", 1));
  expect_shape(n, out[0], x.type.shape);
  const DType q_dtype = zp.present ? zp.type.dtype : DType::u8;
  if (out[0].type.dtype != q_dtype) bad_node(n, "output dtype differs from the zero point's");
  visit_quantized(n, q_dtype, [&]<typename Q>() {
    Q* y = out[0].as<Q>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const size_t c = p.index(i);
      y[i] = saturate_round<Q>(as_float(x, i) / p.scale[c], p.zero_point[c]);
    }
  });
}

void dequantize_linear_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 3);
  expect_outputs(n, out, 1, 1);
  const ConstTensorView& q = in[0];
  if (q.type.dtype != DType::u8 && q.type.dtype != DType::i8 && q.type.dtype != DType::i32)
    unsupported(n, "input dtype " + std::string(dtype_name(q.type.dtype)) + " (ref: uint8, int8, int32)");
  const ConstTensorView zp = has_input(in, 2) ? in[2] : ConstTensorView::missing();
  if (zp.present && zp.type.dtype != q.type.dtype)
    bad_node(n, "zero point is " + std::string(dtype_name(zp.type.dtype)) + " but the input is " +
                    std::string(dtype_name(q.type.dtype)));
  const QuantParams p = read_quant_params(n, in[1], zp, q.type.shape, attr_int(n.attrs, "axis", 1));
  if (q.type.dtype == DType::i32 && std::any_of(p.zero_point.begin(), p.zero_point.end(), [](int32_t z) { return z != 0; }))
    bad_node(n, "an int32 input takes no zero point other than 0");
  expect_shape(n, out[0], q.type.shape);
  if (out[0].type.dtype != DType::f32) unsupported(n, "output dtype " + std::string(dtype_name(out[0].type.dtype)));
  const std::vector<int32_t> values = read_int32(n, q);
  float* y = out[0].as<float>();
  for (int64_t i = 0; i < q.numel(); ++i) {
    const size_t c = p.index(i);
    // The difference is exact in float32 for 8-bit data; for int32 ONNX computes it the same way.
    y[i] = static_cast<float>(values[static_cast<size_t>(i)] - p.zero_point[c]) * p.scale[c];
  }
}

void dynamic_quantize_linear_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 3, 3);
  const ConstTensorView& x = in[0];
  if (x.type.dtype != DType::f32) unsupported(n, "input dtype " + std::string(dtype_name(x.type.dtype)));
  expect_shape(n, out[0], x.type.shape);
  if (out[0].type.dtype != DType::u8 || out[1].type.dtype != DType::f32 || out[2].type.dtype != DType::u8 ||
      out[1].numel() != 1 || out[2].numel() != 1)
    bad_node(n, "outputs must be uint8 data, a float32 scale and a uint8 zero point");
  const float* xs = x.as<float>();
  const auto [scale, zp] = dynamic_params(xs, x.numel());
  uint8_t* y = out[0].as<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = saturate_round<uint8_t>(xs[i] / scale, zp);
  out[1].as<float>()[0] = scale;
  out[2].as<uint8_t>()[0] = zp;
}

}  // namespace

void register_quantize(KernelRegistry& r) {
  r.add("QuantizeLinear", quantize_linear_kernel);
  r.add("DequantizeLinear", dequantize_linear_kernel);
  r.add("DynamicQuantizeLinear", dynamic_quantize_linear_kernel);
}

}  // namespace tessera::ref
