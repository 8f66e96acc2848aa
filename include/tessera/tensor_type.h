// Element types and statically shaped tensor types.
//
// tessera partitions graphs whose shapes are fully static: symbolic dimensions are bound at import
// (`--input-shape`), so every Value has a TensorType with concrete dimensions. A rank-0 shape is a
// scalar. The names are ONNX's lower-case short names ("f32", "i64", ...), used in every text form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

enum class DType : uint8_t { f32, f16, bf16, f64, i64, i32, i8, u8, boolean };

std::string_view dtype_name(DType t);                       // "f32", ..., "bool"
std::optional<DType> dtype_from_name(std::string_view name);
size_t dtype_size(DType t);                                 // bytes per element
bool is_float(DType t);
int dtype_to_onnx(DType t);                                 // onnx::TensorProto_DataType value
std::optional<DType> dtype_from_onnx(int onnx_type);

using Shape = std::vector<int64_t>;

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;

  int64_t numel() const;
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  bool operator==(const TensorType&) const = default;
};

std::string shape_to_string(const Shape& s);                // "1x3x224x224", "scalar"
std::string to_string(const TensorType& t);                 // "f32[1,3,224,224]"

}  // namespace tessera
