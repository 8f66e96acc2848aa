// The cores of the ref backend's convolution and matrix product, shared with the integer kernels
// (integer_linear.cc), which widen their 8-bit operands to int32, subtract the zero points, and
// run the same loops with an int32 accumulator, as ONNX defines ConvInteger and MatMulInteger.
#pragma once

#include "backends/ref/ref_util.h"

namespace tessera::ref {

// Conv's semantics and attributes (conv.cc) over int32 X, W and an optional int32 bias in[2];
// `out` is an int32 tensor of the node's output shape.
void conv_int32(const Node& n, std::span<const ConstTensorView> in, const TensorView& out);

// MatMul's semantics (matmul.cc: numpy batch broadcasting, 1-D promotion) for two tensors of any
// one numeric dtype, int32 included; `out` has that dtype and the product's shape.
void matmul_any(const Node& n, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out);

}  // namespace tessera::ref
