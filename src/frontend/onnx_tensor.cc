#include "frontend/onnx_tensor.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tessera/error.h"
#include "ir/limits.h"

namespace tessera {
namespace {

template <class Src, class Dst>
TensorData convert(const google::protobuf::RepeatedField<Src>& src) {
  auto bytes = std::make_shared<TensorBytes>(src.size() * sizeof(Dst));
  auto* out = reinterpret_cast<Dst*>(bytes->data());
  for (int i = 0; i < src.size(); ++i) out[i] = static_cast<Dst>(src[i]);
  return bytes;
}

TensorData read_external(const onnx::TensorProto& t, const std::string& where, const std::string& base_dir,
                         size_t expected, const std::function<void(const std::string&)>& warn) {
  std::string location;
  int64_t offset = 0, length = -1;
  auto count = [&](const std::string& key, const std::string& text) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 0)
      throw UserError(where, "external data " + key, "'" + text + "' is not a byte count");
    return v;
  };
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset") offset = count("offset", kv.value());
    if (kv.key() == "length") length = count("length", kv.value());
  }
  if (location.empty()) throw UserError(where, "", "external data without a location");
  std::filesystem::path path = std::filesystem::path(base_dir) / location;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (warn) warn("external data file '" + path.string() + "' for '" + t.name() + "' is missing; its constants are shape-only");
    return nullptr;
  }
  if (length < 0) length = static_cast<int64_t>(expected);
  if (static_cast<size_t>(length) != expected)
    throw UserError(where, "", "external data length " + std::to_string(length) + " does not match its type (" +
                                   std::to_string(expected) + " bytes)");
  auto bytes = std::make_shared<TensorBytes>(expected);
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(bytes->data()), length);
  if (in.gcount() != length)
    throw UserError(path.string(), "offset " + std::to_string(offset), "external data file is truncated");
  return bytes;
}

}  // namespace

Tensor tensor_from_onnx(const onnx::TensorProto& t, const std::string& where, const std::string& base_dir,
                        const std::function<void(const std::string&)>& warn) {
  auto dtype = dtype_from_onnx(t.data_type());
  if (!dtype) throw UserError(where, "", "tensor element type " + std::to_string(t.data_type()) + " is not supported");
  Tensor out;
  out.type.dtype = *dtype;
  for (int64_t d : t.dims()) {
    if (d < 0) throw UserError(where, "", "negative dimension " + std::to_string(d));
    out.type.shape.push_back(d);
  }
  if (std::string why = size_limit_problem(out.type); !why.empty()) throw UserError(where, "", why);
  const size_t expected = out.type.bytes();
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    out.data = read_external(t, where, base_dir, expected, warn);
    return out;
  }
  TensorData data;
  if (t.has_raw_data()) {
    data = std::make_shared<TensorBytes>(t.raw_data().begin(), t.raw_data().end());
  } else {
    switch (*dtype) {
      case DType::f32: data = convert<float, float>(t.float_data()); break;
      case DType::f64: data = convert<double, double>(t.double_data()); break;
      case DType::i64: data = convert<int64_t, int64_t>(t.int64_data()); break;
      case DType::i32: data = convert<int32_t, int32_t>(t.int32_data()); break;
      case DType::i8: data = convert<int32_t, int8_t>(t.int32_data()); break;
      case DType::u8:
      case DType::boolean: data = convert<int32_t, uint8_t>(t.int32_data()); break;
      case DType::f16:
      case DType::bf16: data = convert<int32_t, uint16_t>(t.int32_data()); break;
    }
  }
  if (data->size() != expected)
    throw UserError(where, "", "tensor holds " + std::to_string(data->size()) + " bytes, its type " +
                                   to_string(out.type) + " needs " + std::to_string(expected));
  out.data = std::move(data);
  return out;
}

onnx::TensorProto tensor_to_onnx(const std::string& name, const Tensor& t) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(dtype_to_onnx(t.type.dtype));
  for (int64_t d : t.type.shape) p.add_dims(d);
  if (t.data)
    p.set_raw_data(std::string(reinterpret_cast<const char*>(t.data->data()), t.data->size()));
  else
    p.set_raw_data(std::string(t.type.bytes(), '\0'));
  return p;
}

}  // namespace tessera
