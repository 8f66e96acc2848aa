// Helpers shared by the ref kernels: dtype dispatch, strides, numpy broadcasting, attribute and
// small-input readers, and the checks every kernel makes on the views it is handed.
//
// The ref kernels favour plain, obviously correct loops over speed. Index arithmetic goes through
// the few helpers here (row-major strides, an odometer over a shape) so that each op file reads
// as the ONNX spec does. Element types: kernels dispatch with visit_dtype over the storage types
// below; boolean is stored as uint8_t (0/1), f16/bf16 as uint16_t: kernels never see them, because
// the table's wrapper (half_kernels.h) hands every kernel f32 copies of a node's f16/bf16 tensors.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/kernel.h"

namespace tessera::ref {

[[noreturn]] void unsupported(const Node& n, const std::string& what);  // KernelUnsupported
[[noreturn]] void bad_node(const Node& n, const std::string& what);     // KernelError

// Calls f.template operator()<T>() with T the storage type of `t` (float, double, int64_t,
// int32_t, int8_t, uint8_t; bool as uint8_t). f16/bf16 are unsupported here.
template <typename F>
void visit_dtype(const Node& n, DType t, F&& f) {
  switch (t) {
    case DType::f32: f.template operator()<float>(); return;
    case DType::f64: f.template operator()<double>(); return;
    case DType::i64: f.template operator()<int64_t>(); return;
    case DType::i32: f.template operator()<int32_t>(); return;
    case DType::i8: f.template operator()<int8_t>(); return;
    case DType::u8:
    case DType::boolean: f.template operator()<uint8_t>(); return;
    default: unsupported(n, std::string("dtype ") + std::string(dtype_name(t)));
  }
}

// As visit_dtype, for kernels defined on floating-point types only.
template <typename F>
void visit_float(const Node& n, DType t, F&& f) {
  if (t == DType::f32) return f.template operator()<float>();
  if (t == DType::f64) return f.template operator()<double>();
  unsupported(n, std::string("dtype ") + std::string(dtype_name(t)) + " (ref: f32, f64)");
}

std::vector<int64_t> strides_of(const Shape& s);            // row-major, in elements
int64_t product_of(const std::vector<int64_t>& extents);    // element count of a box
int64_t normalize_axis(const Node& n, int64_t axis, int rank);  // [-rank, rank) -> [0, rank)

// numpy broadcasting of several shapes; KernelError when they do not broadcast.
Shape broadcast_shapes(const Node& n, std::span<const Shape> shapes);
// Strides of `in` seen through the broadcast output shape `out` (0 along broadcast dimensions).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Visits every element of `out` in row-major order with the matching element offsets into
// inputs whose strides (aligned to out's rank, e.g. from broadcast_strides) are given:
// f(out_index, offsets) where offsets[j] is input j's element offset.
template <typename F>
void for_each_broadcast(const Shape& out, std::span<const std::vector<int64_t>> in_strides, F&& f) {
  const int rank = static_cast<int>(out.size());
  const size_t k = in_strides.size();
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  if (total == 0) return;
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0), off(k, 0);
  for (int64_t i = 0; i < total; ++i) {
    f(i, static_cast<const int64_t*>(off.data()));
    for (int d = rank - 1; d >= 0; --d) {
      const auto du = static_cast<size_t>(d);
      if (++idx[du] < out[du]) {
        for (size_t j = 0; j < k; ++j) off[j] += in_strides[j][du];
        break;
      }
      for (size_t j = 0; j < k; ++j) off[j] -= in_strides[j][du] * (out[du] - 1);
      idx[du] = 0;
    }
  }
}

// The count and presence checks every kernel starts with.
void expect_inputs(const Node& n, std::span<const ConstTensorView> in, size_t min, size_t max);
void expect_outputs(const Node& n, std::span<const TensorView> out, size_t min, size_t max);
void expect_shape(const Node& n, const TensorView& out, const Shape& want);
bool has_input(std::span<const ConstTensorView> in, size_t i);  // present and not missing()
bool has_output(std::span<const TensorView> out, size_t i);     // given, with non-null data

// An integer tensor (i64 or i32) as int64 values, e.g. Reshape's shape or Slice's starts.
std::vector<int64_t> read_ints(const Node& n, const ConstTensorView& v);
// A one-element numeric tensor as a double (Clip bounds, Range's start, Pad's value).
double read_scalar(const Node& n, const ConstTensorView& v);

// Element-wise conversion between any two storage dtypes, including f16/bf16 (used by Cast).
double load_as_double(DType t, const void* data, int64_t i);
void store_from_double(DType t, void* data, int64_t i, double x);

// Byte-wise copy of a whole tensor (Identity, Reshape, Flatten, ...): same element count needed.
void copy_all(const Node& n, const ConstTensorView& in, const TensorView& out);

}  // namespace tessera::ref

namespace tessera::ref {

// A same-shape unary kernel: make(node) reads the attributes once and returns the element
// function, a generic callable applied to each element as its storage type T. Float-only ops
// (Exp, Sigmoid, ...) dispatch on f32/f64; numeric ones (Abs, Neg, Clip) on every dtype.
template <bool FloatOnly, typename Make>
NodeKernel unary_kernel(Make make) {
  return [make](const Node& n, std::span<const ConstTensorView> in, std::span<const TensorView> out) {
    expect_inputs(n, in, 1, 1);
    expect_outputs(n, out, 1, 1);
    expect_shape(n, out[0], in[0].type.shape);
    if (out[0].type.dtype != in[0].type.dtype) bad_node(n, "output dtype differs from input dtype");
    auto f = make(n, in);
    auto body = [&]<typename T>() {
      const T* x = in[0].as<T>();
      T* y = out[0].as<T>();
      const int64_t count = in[0].numel();
      for (int64_t i = 0; i < count; ++i) y[i] = static_cast<T>(f(x[i]));
    };
    if constexpr (FloatOnly) visit_float(n, in[0].type.dtype, body);
    else visit_dtype(n, in[0].type.dtype, body);
  };
}

// A unary op without attributes: make() ignores the node.
template <bool FloatOnly, typename F>
NodeKernel simple_unary(F f) {
  return unary_kernel<FloatOnly>([f](const Node&, std::span<const ConstTensorView>) { return f; });
}

}  // namespace tessera::ref
