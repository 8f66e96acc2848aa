// Scale and zero-point readers of the quantized kernels (see quant_util.h).
#include "backends/ref/quant_util.h"

#include <algorithm>

namespace tessera::ref {

std::vector<int32_t> read_int32(const Node& n, const ConstTensorView& v) {
  std::vector<int32_t> out(static_cast<size_t>(v.numel()));
  switch (v.type.dtype) {
    case DType::u8: for (size_t i = 0; i < out.size(); ++i) out[i] = v.as<uint8_t>()[i]; break;
    case DType::i8: for (size_t i = 0; i < out.size(); ++i) out[i] = v.as<int8_t>()[i]; break;
    case DType::i32: for (size_t i = 0; i < out.size(); ++i) out[i] = v.as<int32_t>()[i]; break;
    default: bad_node(n, "expected an int8, uint8 or int32 tensor, got " + to_string(v.type));
  }
  return out;
}

std::vector<int32_t> read_zero_points(const Node& n, const ConstTensorView& zp, DType data_dtype, int64_t size,
                                      const char* where) {
  if (!zp.present) return {0};
  if (zp.type.dtype != data_dtype)
    bad_node(n, std::string(where) + " is " + std::string(dtype_name(zp.type.dtype)) + " but its data is " +
                    std::string(dtype_name(data_dtype)));
  if (zp.type.rank() > 1 || zp.numel() < 1 || (zp.numel() != 1 && size != 0 && zp.numel() != size))
    bad_node(n, std::string(where) + " has shape " + shape_to_string(zp.type.shape) + ", expected a scalar or " +
                    std::to_string(size) + " values");
  return read_int32(n, zp);
}

HostTensor widen_shifted(const Node& n, const ConstTensorView& x, const std::vector<int32_t>& zp, int64_t inner) {
  HostTensor out(TensorType{DType::i32, x.type.shape});
  const std::vector<int32_t> values = read_int32(n, x);
  int32_t* y = out.view().as<int32_t>();
  const auto groups = static_cast<int64_t>(zp.size());
  for (int64_t i = 0; i < x.numel(); ++i)
    y[i] = values[static_cast<size_t>(i)] - zp[groups == 1 ? 0 : static_cast<size_t>((i / inner) % groups)];
  return out;
}

DynamicParams dynamic_params(const float* x, int64_t count) {
  float lo = 0.0f, hi = 0.0f;  // the range always includes 0, so that 0 is exact
  for (int64_t i = 0; i < count; ++i) {
    if (std::isnan(x[i])) continue;
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  const float zp = std::clamp(0.0f - lo / scale, 0.0f, 255.0f);
  return {scale, static_cast<uint8_t>(std::nearbyint(zp))};
}

QuantParams read_quant_params(const Node& n, const ConstTensorView& scale, const ConstTensorView& zero_point,
                              const Shape& shape, int64_t axis) {
  if (scale.type.dtype != DType::f32) unsupported(n, "scale of dtype " + std::string(dtype_name(scale.type.dtype)));
  if (scale.type.rank() > 1 || scale.numel() < 1)
    bad_node(n, "scale has shape " + shape_to_string(scale.type.shape) + ", expected a scalar or a 1-D tensor");
  QuantParams p;
  p.scale.assign(scale.as<float>(), scale.as<float>() + scale.numel());
  for (float s : p.scale)
    if (!(s > 0.0f) || !std::isfinite(s)) bad_node(n, "scale " + std::to_string(s) + " is not positive and finite");
  if (p.scale.size() > 1) {  // one value, scalar or 1-D, is per tensor (as ONNX Runtime reads it)
    const int rank = static_cast<int>(shape.size());
    const auto a = static_cast<size_t>(normalize_axis(n, axis, rank));
    if (static_cast<int64_t>(p.scale.size()) != shape[a])
      bad_node(n, "scale has " + std::to_string(p.scale.size()) + " values but axis " + std::to_string(a) + " of " +
                      shape_to_string(shape) + " has " + std::to_string(shape[a]));
    for (size_t d = a + 1; d < shape.size(); ++d) p.inner *= shape[d];
  }
  if (zero_point.present && zero_point.type.shape != scale.type.shape)
    bad_node(n, "zero point has shape " + shape_to_string(zero_point.type.shape) + " but scale has " +
                    shape_to_string(scale.type.shape));
  p.zero_point = zero_point.present ? read_int32(n, zero_point) : std::vector<int32_t>(p.scale.size(), 0);
  return p;
}

}  // namespace tessera::ref
