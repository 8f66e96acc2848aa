// A Graph as an ONNX ModelProto: used for ONNX's shape inference on any Graph, for writing models
// and, by emit, as the building block of module.onnx. Constants become initializers (shape-only
// constants get zero-filled data only if `fill_shape_only` is set, else they become graph inputs).
#pragma once

#include <onnx/onnx_pb.h>

#include "tessera/graph.h"
#include "frontend/onnx_tensor.h"

namespace tessera {

onnx::ModelProto graph_to_onnx(const Graph& g, bool fill_shape_only = false);
onnx::NodeProto node_to_onnx(const Graph& g, const Node& n);
onnx::ValueInfoProto value_info_to_onnx(const std::string& name, const TensorType& t);
onnx::AttributeProto attribute_to_onnx(const std::string& name, const Attribute& a);

}  // namespace tessera
