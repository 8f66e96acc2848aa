// Conversion between ONNX TensorProto and tessera's Tensor.
//
// Reading accepts raw_data and every typed field ONNX writes (float_data, int32_data for the small
// integer and 16-bit float types, int64_data, double_data) and external data (data_location =
// EXTERNAL, located relative to `base_dir`). A missing external-data file gives a shape-only
// tensor (null data) and a call to `warn`; a malformed tensor throws UserError naming `where`.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>

#include "tessera/attribute.h"

namespace tessera {

Tensor tensor_from_onnx(const onnx::TensorProto& t, const std::string& where, const std::string& base_dir = "",
                        const std::function<void(const std::string&)>& warn = nullptr);
onnx::TensorProto tensor_to_onnx(const std::string& name, const Tensor& t);

}  // namespace tessera
