#include "tessera/tensor_type.h"
#include "ir/limits.h"

#include <array>
#include <limits>

namespace tessera {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
  int onnx;  // onnx::TensorProto_DataType
};

constexpr std::array<DTypeInfo, 9> kDTypes{{
    {DType::f32, "f32", 4, 1},
    {DType::f16, "f16", 2, 10},
    {DType::bf16, "bf16", 2, 16},
    {DType::f64, "f64", 8, 11},
    {DType::i64, "i64", 8, 7},
    {DType::i32, "i32", 4, 6},
    {DType::i8, "i8", 1, 3},
    {DType::u8, "u8", 1, 2},
    {DType::boolean, "bool", 1, 9},
}};

const DTypeInfo& info(DType t) { return kDTypes[static_cast<size_t>(t)]; }

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
size_t dtype_size(DType t) { return info(t).size; }
int dtype_to_onnx(DType t) { return info(t).onnx; }
bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.type;
  return std::nullopt;
}

std::optional<DType> dtype_from_onnx(int onnx_type) {
  for (const auto& d : kDTypes)
    if (d.onnx == onnx_type) return d.type;
  return std::nullopt;
}

int64_t TensorType::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0) return 0;
    if (__builtin_mul_overflow(n, d, &n)) n = std::numeric_limits<int64_t>::max();
  }
  return n;
}

std::string size_limit_problem(const TensorType& t) {
  int64_t n = t.numel();
  if (n <= kMaxTensorElements) return "";
  return to_string(t) + " has " + (n == std::numeric_limits<int64_t>::max() ? "more than 2^63" : std::to_string(n)) +
         " elements, more than tessera's limit of " + std::to_string(kMaxTensorElements) + " per tensor";
}

std::string shape_to_string(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(s[i]);
  }
  return out;
}

std::string to_string(const TensorType& t) {
  std::string out(dtype_name(t.dtype));
  out += '[';
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(t.shape[i]);
  }
  return out + ']';
}

}  // namespace tessera
