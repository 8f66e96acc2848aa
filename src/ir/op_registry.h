// The op registry: what tessera knows about each ONNX operator.
//
// Per op type: its kind (TVM's TOpPattern order E < B < I < R < A < O), which drives fusion
// closure, and its cost figures: FLOPs and bytes moved for one execution of a node, used by the
// roofline cost model and by `tessera info`. Shape inference is not here: it is ONNX's own
// (src/frontend/shape_inference.cc), which knows every standard op.
//
// An op the registry does not know is not an error: it is opaque (kind O), costs its bytes and no
// FLOPs, and keeps its attributes. Per-op cost formulas live one file per op family
// (src/ir/ops_*.cc) behind this small table, not in one switch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/graph.h"

namespace tessera {

enum class OpKind : uint8_t {
  Elementwise = 0,      // E: Relu, Abs, Sigmoid, ...
  Broadcast = 1,        // B: Add, Mul, ...
  Injective = 2,        // I: Reshape, Transpose, Concat, ...
  Reduction = 3,        // R: ReduceSum, Softmax, pooling, ...
  OutEWiseFusable = 4,  // A: Conv, MatMul, Gemm, BatchNormalization, ...
  Opaque = 5,           // O: everything else
};

char op_kind_letter(OpKind k);            // 'E', 'B', 'I', 'R', 'A', 'O'
std::string_view op_kind_name(OpKind k);  // "elementwise", ...

using NodeCostFn = std::function<double(const Graph&, const Node&)>;

struct OpInfo {
  std::string op;
  OpKind kind = OpKind::Opaque;
  NodeCostFn flops;   // null = 0 FLOPs
};

// The registered info for `op`, or nullptr if tessera does not know it.
const OpInfo* find_op(std::string_view op);
// Every registered op type, sorted.
std::vector<std::string> registered_ops();

OpKind op_kind(std::string_view op);                // Opaque when unknown
// Whether input `index` of `op` is an operand whose *value* shapes the computation (a Reshape
// target, Resize scales, Slice bounds, Clip bounds, reduction axes, ...), as opposed to data.
// A constant read through such an input is never a weight (graph.h, Value::is_weight).
// Quantization scales and zero points (QuantizeLinear, DequantizeLinear, QLinearConv,
// QLinearMatMul) are such operands: an int8 kernel folds them into its output scales when it is
// created, so it needs their values, as a Clip needs its bounds.
bool is_value_input(std::string_view op, size_t index);
double node_flops(const Graph& g, const Node& n);   // 0 when unknown
double node_bytes(const Graph& g, const Node& n);   // bytes of all inputs read + outputs written

}  // namespace tessera
