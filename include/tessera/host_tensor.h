// HostTensor: a small owning tensor in host memory, for tests, tools and the runtime's inputs.
//
// It is a TensorType plus its bytes (row-major, little-endian, as ONNX stores raw data) and hands
// out the non-owning views of kernel.h. Random fill is seeded and platform-independent (a
// splitmix64 stream, not <random>'s distributions, whose output differs between standard
// libraries), so "seeded random inputs" mean the same numbers on every machine:
//   floats  uniform in [-1, 1)      ints  uniform in [0, 10)      bool  0 or 1
// The bytes live in a std::vector<std::byte>, aligned for every dtype by operator new.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "tessera/attribute.h"
#include "tessera/tensor_type.h"

namespace tessera {

// Non-owning views of tensors in someone else's memory (a TensorType plus a pointer), cheap to
// copy: how a Session takes your input and output buffers, and how kernels take theirs. A missing
// optional input is ConstTensorView::missing(); a present zero-element tensor may have a null
// pointer, so presence is a flag, not the pointer.
// A mutable, non-owning view of one tensor.
struct TensorView {
  TensorType type;
  void* data = nullptr;

  template <typename T> T* as() const { return static_cast<T*>(data); }
  int64_t numel() const { return type.numel(); }
};

// A read-only, non-owning view of one tensor; `present` is false for a missing optional input.
struct ConstTensorView {
  TensorType type;
  const void* data = nullptr;
  bool present = true;

  ConstTensorView() = default;
  ConstTensorView(TensorType t, const void* d) : type(std::move(t)), data(d) {}
  ConstTensorView(const TensorView& v) : type(v.type), data(v.data) {}  // NOLINT: implicit on purpose
  static ConstTensorView missing() {
    ConstTensorView v;
    v.present = false;
    return v;
  }

  template <typename T> const T* as() const { return static_cast<const T*>(data); }
  int64_t numel() const { return type.numel(); }
};

struct HostTensor {
  TensorType type;
  std::vector<std::byte> bytes;

  HostTensor() = default;
  explicit HostTensor(TensorType t);   // zero-filled

  // Seeded random contents per dtype (see the header comment).
  static HostTensor random(const TensorType& t, uint64_t seed);
  // A copy of a constant's data; throws std::invalid_argument when the tensor has no data or
  // its byte count disagrees with its type.
  static HostTensor from_tensor(const Tensor& t);
  // From typed values; values.size() must equal the shape's element count.
  template <typename T>
  static HostTensor of(DType dtype, Shape shape, const std::vector<T>& values);

  TensorView view();
  ConstTensorView view() const;
  template <typename T> std::span<T> as() { return {reinterpret_cast<T*>(bytes.data()), count()}; }
  template <typename T> std::span<const T> as() const {
    return {reinterpret_cast<const T*>(bytes.data()), count()};
  }
  size_t count() const { return static_cast<size_t>(type.numel()); }
};

// ||actual - reference||_2 / ||reference||_2 over all elements, in double: the error measure of
// precision variants and accuracy budgets (0 when both are zero, +inf when only the reference is,
// or for another type or a NaN/inf mismatch). f32, f16 and bf16; other dtypes: 0 if equal, else +inf.
double relative_l2_error(const HostTensor& actual, const HostTensor& reference);

// f16 / bf16 <-> f32, round-to-nearest-even; shared by random fill, Cast and the ONNX oracle.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);

template <typename T>
HostTensor HostTensor::of(DType dtype, Shape shape, const std::vector<T>& values) {
  HostTensor h(TensorType{dtype, std::move(shape)});
  if (values.size() != h.count() || sizeof(T) != dtype_size(dtype))
    throw std::invalid_argument("HostTensor::of: values do not match " + to_string(h.type));
  std::copy(values.begin(), values.end(), h.as<T>().begin());
  return h;
}

}  // namespace tessera
