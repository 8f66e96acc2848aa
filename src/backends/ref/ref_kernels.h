// The `ref` backend's kernels: straightforward reference implementations of the ONNX operators
// tessera's models use, written for correctness over speed. ref is the correctness oracle of the
// other backends (`tessera run --check`) and the fallback backend of every plan; its kernels are
// themselves checked against ONNX's own node tests (tests/backends/ref, docs/ref_backend.md).
//
// Each op family lives in its own file and registers its kernels here; make_ref_kernels() builds
// the whole table. Semantics follow the ONNX opset that tessera imports (17): Softmax takes one
// axis (opset 13), ReduceSum takes axes as an input and the other reductions as an attribute,
// Split and Slice take their sizes/indices as inputs (attributes of older opsets are accepted too).
#pragma once

#include "backends/kernel.h"

namespace tessera::ref {

// One registration function per op family (one .cc each).
void register_unary_math(KernelRegistry& r);     // elementwise.cc: Abs, Exp, Sqrt, Erf, Not, ...
void register_activations(KernelRegistry& r);    // activations.cc: Relu, Sigmoid, Clip, Elu, ...
void register_binary(KernelRegistry& r);         // binary.cc: Add, Pow, Equal, Where, Max, ...
void register_conv(KernelRegistry& r);           // conv.cc: Conv, ConvTranspose
void register_matmul(KernelRegistry& r);         // matmul.cc: MatMul, Gemm
void register_pool(KernelRegistry& r);           // pool.cc: MaxPool, AveragePool, Global*Pool
void register_norm(KernelRegistry& r);           // norm.cc: BatchNormalization, LayerNorm, ...
void register_softmax(KernelRegistry& r);        // softmax.cc: Softmax, LogSoftmax, Hardmax
void register_reduce(KernelRegistry& r);         // reduce.cc: Reduce*, ArgMax, ArgMin
void register_reshape(KernelRegistry& r);        // reshape.cc: Reshape, Flatten, Squeeze, Shape, ...
void register_data_movement(KernelRegistry& r);  // data_movement.cc: Transpose, Concat, Slice, ...
void register_generate(KernelRegistry& r);       // generate.cc: Cast, ConstantOfShape, Range, ...
void register_resize(KernelRegistry& r);         // resize.cc: Resize (nearest, linear)
void register_indexing(KernelRegistry& r);       // indexing.cc: GatherND, Scatter*, OneHot, Trilu
void register_recurrent(KernelRegistry& r);      // recurrent.cc: RNN, GRU, LSTM
void register_control_flow(KernelRegistry& r);   // control_flow.cc: If, Loop, Scan (sub-graphs interpreted)
void register_quantize(KernelRegistry& r);       // quantize.cc: QuantizeLinear, DequantizeLinear, ...
void register_integer_linear(KernelRegistry& r); // integer_linear.cc: ConvInteger, QLinearMatMul, ...
void register_qlinear_elementwise(KernelRegistry& r);  // qlinear_elementwise.cc: com.microsoft QLinearAdd, ...

}  // namespace tessera::ref

namespace tessera {

// Every ref kernel, in a registry named "ref".
KernelRegistry make_ref_kernels();

}  // namespace tessera
