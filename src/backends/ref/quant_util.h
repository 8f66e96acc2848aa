// Linear quantization as ONNX defines it, shared by the quantized kernels (quantize.cc,
// integer_linear.cc, qlinear_ops.cc).
//
// A quantized tensor q (uint8 or int8) stands for the real values r = (q - zero_point) * scale.
// The scale and zero point are per tensor (one of each) or per axis (one per index along `axis`,
// ONNX opset 13): element i of a tensor of shape S uses entry (i / inner) % S[axis], where inner
// is the product of S's dimensions after the axis.
//
//   quantize:    q = saturate(round_half_even(r / scale) + zero_point)   r / scale in float32
//   dequantize:  r = (q - zero_point) * scale                            in float32
//   requantize:  q = saturate(round_half_even(acc * multiplier) + zero_point), acc an int32 sum
//
// Saturation clamps to the zero point's type: [0, 255] for uint8, [-128, 127] for int8. NaN
// quantizes to the zero point (ONNX leaves it undefined; a kernel must not hit the undefined
// float-to-integer conversion). Rounding is the current FP mode's nearbyint, round-half-to-even
// by default, which is what ONNX (numpy's rint) and ONNX Runtime use.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backends/ref/ref_util.h"

namespace tessera::ref {

// A tensor's scale and zero point, per tensor (size 1) or per axis (size = the axis' extent).
struct QuantParams {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;  // same size as scale; zeros when the input was omitted
  int64_t inner = 1;                // elements after the axis (1 for per tensor)

  // The entry that element `i` of the quantized tensor uses.
  size_t index(int64_t i) const {
    return scale.size() == 1 ? 0 : static_cast<size_t>((i / inner) % static_cast<int64_t>(scale.size()));
  }
};

// Reads `scale` (f32, scalar or 1-D) and the optional `zero_point` (same shape; a missing view
// means 0) for a tensor of shape `shape`. A 1-D scale with more than one element is per axis
// along `axis` and must have that dimension's extent. Throws KernelError (bad_node) for a scale
// that is not positive and finite, and for shapes that disagree.
QuantParams read_quant_params(const Node& n, const ConstTensorView& scale, const ConstTensorView& zero_point,
                              const Shape& shape, int64_t axis);

// Integer values of an i8/u8/i32 tensor, widened to int32 (zero points, quantized data).
std::vector<int32_t> read_int32(const Node& n, const ConstTensorView& v);

// Zero point of a tensor as the kernels' int32; `where` names it in the error message. A missing
// view gives 0. `size` 0 accepts any length; otherwise the zero point must have 1 or `size` values.
std::vector<int32_t> read_zero_points(const Node& n, const ConstTensorView& zp, DType data_dtype, int64_t size,
                                      const char* where);

// int32(x) - zp[(i / inner) % zp.size()] for every element i of an i8/u8 tensor: the operand of an
// integer convolution or product whose zero point is per tensor (one value) or per channel.
HostTensor widen_shifted(const Node& n, const ConstTensorView& x, const std::vector<int32_t>& zp, int64_t inner);

// DynamicQuantizeLinear's uint8 parameters for `count` floats: the range [min(x, 0), max(x, 0)]
// mapped onto [0, 255] (scale 1/255 when the range is empty), NaNs ignored.
struct DynamicParams {
  float scale;
  uint8_t zero_point;
};
DynamicParams dynamic_params(const float* x, int64_t count);

// Round half to even, then clamp to Q's range; NaN gives `offset` (the zero point).
template <typename Q>
Q saturate_round(double x, int32_t offset) {
  constexpr double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  if (std::isnan(x)) return static_cast<Q>(std::clamp(static_cast<double>(offset), lo, hi));
  const double q = std::nearbyint(x) + offset;
  return static_cast<Q>(q < lo ? lo : q > hi ? hi : q);
}

// Calls f.template operator()<Q>() with Q = uint8_t or int8_t; other dtypes are unsupported.
template <typename F>
void visit_quantized(const Node& n, DType t, F&& f) {
  if (t == DType::u8) return f.template operator()<uint8_t>();
  if (t == DType::i8) return f.template operator()<int8_t>();
  unsupported(n, std::string("quantized dtype ") + std::string(dtype_name(t)) + " (ref: uint8, int8)");
}

}  // namespace tessera::ref
