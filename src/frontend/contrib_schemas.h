// ONNX Runtime's quantized com.microsoft operators, made known to ONNX's shape inference.
//
// ONNX Runtime's quantization tool writes, besides ONNX's own QuantizeLinear/QLinearConv/...,
// operators of its com.microsoft domain: QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearGlobalAveragePool, DynamicQuantizeMatMul, MatMulIntegerToFloat. ONNX's inference has no
// schema for them, so their outputs (rarely declared in such files) would stay untyped and the
// import would fail. Registering their schemas (inputs, type constraints, a shape function; from
// ONNX Runtime's ContribOperators.md) lets inference type them and go on, and checks their
// element types as it does ONNX's own:
//
//   QLinearAdd(A, A_s, A_zp, B, B_s, B_zp, C_s, C_zp) -> C      broadcast of A and B, A's type
//   QLinearGlobalAveragePool(X, x_s, x_zp, y_s, y_zp) -> Y      [N, C, 1, ...] (channels_last: [N, 1, ..., C])
//   MatMulIntegerToFloat(A, B, a_s, b_s, ...) -> Y              MatMul's shape, float
//
// The registration goes into ONNX's process-wide schema registry (ONNX has no other), once; the
// domain is registered at version 1, the version the importer gives every non-default domain.
#pragma once

namespace tessera::detail {

// Idempotent and thread-safe; shape_inference.cc calls it before inferring.
void register_contrib_schemas();

}  // namespace tessera::detail
