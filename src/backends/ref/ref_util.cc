// Shared helpers of the ref kernels (see ref_util.h).
#include "backends/ref/ref_util.h"

#include <algorithm>
#include <cstring>

namespace tessera::ref {

void unsupported(const Node& n, const std::string& what) {
  throw KernelUnsupported("ref: " + n.op + " (node " + n.name + "): unsupported " + what);
}

void bad_node(const Node& n, const std::string& what) {
  throw KernelError("ref: " + n.op + " (node " + n.name + "): " + what);
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

int64_t product_of(const std::vector<int64_t>& extents) {
  int64_t p = 1;
  for (int64_t x : extents) p *= x;
  return p;
}

int64_t normalize_axis(const Node& n, int64_t axis, int rank) {
  if (axis < -rank || axis >= std::max(rank, 1))
    bad_node(n, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Shape broadcast_shapes(const Node& n, std::span<const Shape> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      const int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      bad_node(n, "shapes do not broadcast: " + shape_to_string(s) + " vs " + shape_to_string(out));
    }
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  const auto own = strides_of(in);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[lead + i] = in[i] == 1 ? 0 : own[i];
  return st;
}

void expect_inputs(const Node& n, std::span<const ConstTensorView> in, size_t min, size_t max) {
  if (in.size() < min || in.size() > max)
    bad_node(n, std::to_string(in.size()) + " inputs, expected " + std::to_string(min) + ".." +
                    std::to_string(max));
  for (size_t i = 0; i < min; ++i)
    if (!in[i].present) bad_node(n, "required input " + std::to_string(i) + " is missing");
}

void expect_outputs(const Node& n, std::span<const TensorView> out, size_t min, size_t max) {
  if (out.size() < min || out.size() > max)
    bad_node(n, std::to_string(out.size()) + " outputs, expected " + std::to_string(min) + ".." +
                    std::to_string(max));
}

void expect_shape(const Node& n, const TensorView& out, const Shape& want) {
  if (out.type.shape != want)
    bad_node(n, "output is " + to_string(out.type) + ", the op computes " + shape_to_string(want));
}

bool has_input(std::span<const ConstTensorView> in, size_t i) { return i < in.size() && in[i].present; }

bool has_output(std::span<const TensorView> out, size_t i) {
  return i < out.size() && out[i].data != nullptr;
}

std::vector<int64_t> read_ints(const Node& n, const ConstTensorView& v) {
  std::vector<int64_t> out(static_cast<size_t>(v.numel()));
  if (v.type.dtype == DType::i64) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = v.as<int64_t>()[i];
  } else if (v.type.dtype == DType::i32) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = v.as<int32_t>()[i];
  } else {
    bad_node(n, "expected an integer tensor, got " + to_string(v.type));
  }
  return out;
}

double read_scalar(const Node& n, const ConstTensorView& v) {
  if (v.numel() != 1) bad_node(n, "expected one element, got " + to_string(v.type));
  if (v.type.dtype == DType::f16 || v.type.dtype == DType::bf16) unsupported(n, "f16/bf16 scalar");
  return load_as_double(v.type.dtype, v.data, 0);
}

double load_as_double(DType t, const void* data, int64_t i) {
  switch (t) {
    case DType::f32: return static_cast<const float*>(data)[i];
    case DType::f64: return static_cast<const double*>(data)[i];
    case DType::f16: return half_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::bf16: return bfloat16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::i64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::i32: return static_cast<const int32_t*>(data)[i];
    case DType::i8: return static_cast<const int8_t*>(data)[i];
    case DType::u8: return static_cast<const uint8_t*>(data)[i];
    case DType::boolean: return static_cast<const uint8_t*>(data)[i] != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

void store_from_double(DType t, void* data, int64_t i, double x) {
  switch (t) {
    case DType::f32: static_cast<float*>(data)[i] = static_cast<float>(x); return;
    case DType::f64: static_cast<double*>(data)[i] = x; return;
    case DType::f16: static_cast<uint16_t*>(data)[i] = float_to_half(static_cast<float>(x)); return;
    case DType::bf16: static_cast<uint16_t*>(data)[i] = float_to_bfloat16(static_cast<float>(x)); return;
    case DType::i64: static_cast<int64_t*>(data)[i] = static_cast<int64_t>(x); return;
    case DType::i32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(x); return;
    case DType::i8: static_cast<int8_t*>(data)[i] = static_cast<int8_t>(x); return;
    case DType::u8: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(x); return;
    case DType::boolean: static_cast<uint8_t*>(data)[i] = x != 0.0 ? 1 : 0; return;
  }
}

void copy_all(const Node& n, const ConstTensorView& in, const TensorView& out) {
  if (in.numel() != out.numel() || in.type.dtype != out.type.dtype)
    bad_node(n, "cannot copy " + to_string(in.type) + " into " + to_string(out.type));
  if (out.type.bytes() != 0 && out.data != in.data) std::memcpy(out.data, in.data, out.type.bytes());
}

}  // namespace tessera::ref
