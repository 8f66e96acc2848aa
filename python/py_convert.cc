// numpy <-> tessera conversions and small file helpers for the Python module (py_convert.h).
#include "py_convert.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/error.h"
#include "tessera/model_loader.h"

namespace tessera::python {
namespace {

// The numpy dtype that holds `dtype`'s bytes (bf16 has none: its raw 16 bits as uint16).
const char* storage_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "uint16";
    case DType::f64: return "float64";
    case DType::i64: return "int64";
    case DType::i32: return "int32";
    case DType::i8: return "int8";
    case DType::u8: return "uint8";
    case DType::boolean: return "bool";
  }
  return "float32";
}

}  // namespace

std::string numpy_dtype_name(DType dtype) { return dtype == DType::bf16 ? "bfloat16" : storage_dtype(dtype); }

py::tuple shape_tuple(const Shape& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = py::int_(shape[i]);
  return t;
}

Shape array_shape(const py::array& a) {
  Shape s;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s.push_back(static_cast<int64_t>(a.shape(i)));
  return s;
}

std::map<std::string, Shape> parse_input_shapes(const py::object& shapes) {
  std::map<std::string, Shape> out;
  if (shapes.is_none()) return out;
  if (!py::isinstance<py::dict>(shapes)) throw UserError("input_shapes", "", "expected a dict {name: shape tuple}");
  for (const auto& [key, value] : shapes.cast<py::dict>()) {
    const std::string name = py::str(key).cast<std::string>();
    if (py::isinstance<py::str>(value)) {
      out.insert(parse_input_shape(name + "=" + value.cast<std::string>(), "input_shapes"));
      continue;
    }
    Shape s;
    try {
      for (const auto& d : value) s.push_back(d.cast<int64_t>());
    } catch (const py::error_already_set&) {
      throw UserError("input_shapes", name, "expected a tuple of integers");
    } catch (const py::cast_error&) {
      throw UserError("input_shapes", name, "expected a tuple of integers");
    }
    for (int64_t d : s)
      if (d < 1) throw UserError("input_shapes", name, "dimensions must be >= 1");
    out[name] = std::move(s);
  }
  return out;
}

py::array as_input_array(const py::handle& value, const TensorInfo& input, const std::string& file) {
  py::module_ np = py::module_::import("numpy");
  py::object target = np.attr("dtype")(storage_dtype(input.type.dtype));
  py::object a = np.attr("asarray")(value);
  py::object dtype = a.attr("dtype");
  if (!dtype.equal(target)) {
    // Converted only from a wider dtype of the same kind (float64 for float32: numpy's default);
    // an int, bool or float16 array for a float32 input is most likely the wrong array, and
    // numpy's "same_kind" would have let every one of them through.
    const bool same_kind = dtype.attr("kind").equal(target.attr("kind"));
    const bool wider = dtype.attr("itemsize").cast<int>() >= target.attr("itemsize").cast<int>();
    if (!same_kind || !wider)
      throw UserError(file, input.name, "input has dtype " + py::str(dtype).cast<std::string>() + ", expected " +
                                            numpy_dtype_name(input.type.dtype));
    a = a.attr("astype")(target);
  }
  // Not ascontiguousarray, which turns a 0-d array (a scalar input) into a 1-d one.
  return np.attr("asarray")(a, py::arg("order") = "C").cast<py::array>();
}

py::array new_array(const TensorType& type) {
  py::module_ np = py::module_::import("numpy");
  return np.attr("empty")(shape_tuple(type.shape), storage_dtype(type.dtype)).cast<py::array>();
}

py::object json_to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path, "", "cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw UserError(path, "", "cannot write the file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw UserError(path, "", "cannot write the file");
  }
}

nlohmann::json parse_plan_text(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(source, "byte " + std::to_string(e.byte), "not valid JSON");
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != "tessera.plan")
    throw UserError(source, "format", "expected \"tessera.plan\"");
  if (!j.contains("version") || j["version"] != 1)
    throw UserError(source, "version", "unsupported version (this tessera reads version 1)");
  if (!j.contains("partitions") || !j["partitions"].is_array()) throw UserError(source, "partitions", "expected a list");
  return j;
}

}  // namespace tessera::python
