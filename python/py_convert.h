// Conversions between Python/numpy values and tessera's C++ types for the `tessera` module.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/session.h"
#include "tessera/tensor_type.h"

namespace tessera::python {

namespace py = pybind11;

// numpy's name of a dtype ("float32", "int64", "bool", ...).
std::string numpy_dtype_name(DType dtype);
py::tuple shape_tuple(const Shape& shape);
Shape array_shape(const py::array& a);

// {"x": (1, 3, 224, 224)} or {"x": "1x3x224x224"} or None -> the --input-shape map.
std::map<std::string, Shape> parse_input_shapes(const py::object& shapes);

// `value` as a C-contiguous array of the input's dtype: the array itself when it already is one
// (no copy), else converted from a wider dtype of the same kind (float64 -> float32, int64 ->
// int32), else a UserError naming the input (int32, bool, uint8 or float16 for a float32 input). The shape is checked by the session.
py::array as_input_array(const py::handle& value, const TensorInfo& input, const std::string& file);
// A fresh, uninitialised C-contiguous array of `type`.
py::array new_array(const TensorType& type);

py::object json_to_python(const nlohmann::json& j);

// Files, with UserError("PATH: ...") on failure; writes are atomic (temporary + rename).
std::string read_text_file(const std::string& path);
void write_text_file(const std::string& path, const std::string& text);
// Parses a tessera.plan text and checks its format and version; `source` names it in errors.
nlohmann::json parse_plan_text(const std::string& text, const std::string& source);

}  // namespace tessera::python
