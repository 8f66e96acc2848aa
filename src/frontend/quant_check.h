// Quantization parameters that cannot be right, refused at import: a scale that is not positive
// and finite, per-axis scales or zero points whose length is not the extent of their axis, a zero
// point whose shape differs from its scale's or whose element type is not its data's.
//
// ONNX's shape inference checks the element types its schemas bind (DequantizeLinear's x and
// x_zero_point), but not lengths or values, and a kernel that finds them wrong fails at run time,
// far from the model. The importer checks once, after inference, every QuantizeLinear,
// DequantizeLinear, ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul of the default
// domain: shapes always, scale values where the scale is a constant with data.
#pragma once

#include <string>

#include "tessera/graph.h"

namespace tessera::detail {

// Throws UserError("FILE: node 'N': ...") for the first node (in graph order) that is wrong.
void check_quantization(const Graph& g, const std::string& file);

}  // namespace tessera::detail
