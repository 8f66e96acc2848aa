// Quantized convolutions and products the onednn compiler runs as one int8 primitive, recognised
// in the flat function it receives, the way ONNX Runtime's QDQ transformer selects node units.
// Internal to src/backends/onednn/.
//
// Terms: a QDQ group is a float convolution or product whose operands are dequantized and whose
// result is quantized again; its QOperator form is one QLinearConv / QLinearMatMul node.
//
//   QDQ       x = DequantizeLinear(xq u8|s8, xs, xz)        per tensor
//             w = DequantizeLinear(wq s8 constant, ws, 0)   per tensor or per output channel
//             b = f32 bias, or DequantizeLinear(bq s32 constant, bs, 0), or none
//             y = QuantizeLinear([Relu | Clip](Conv | MatMul | Gemm(x, w, b)), ys, yz)
//   QOperator y = QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz, bq) / QLinearMatMul(...)
//
//   int8 primitive: src xq with zero point xz, weights wq, bias b / (xs * ws[c]) (accumulator
//   units), output scales xs * ws[c] / ys, post-op Relu or Clip(lo / ys, hi / ys), dst zero point yz
//
// All of it is integer arithmetic up to the output scale, so results equal ref's (which computes
// the group in float on dequantized values, or in int32 for QOperator) except where float
// rounding moves a value across a rounding boundary: one quantization step at most.
//
// What oneDNN 2.x cannot take is not matched, so the nodes run one by one (Q and DQ as reorders,
// the anchor in f32): u8 or per-channel-shifted weights (a weight zero point other than 0),
// per-axis activation quantization, Gemm with alpha/beta != 1 or transA, MatMul above rank 2, a
// weight scale along another axis than the output channels. The source DQ may have other
// readers (it then also runs as a reorder for them); every other inner value must be read only
// inside the group. Scales and zero points are constants of the function (op_registry.h:
// is_value_input), so the group is fixed at compile time; a bias in float may be a function input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera::onednn {

// The ops that read or write integer tensors in an onednn function.
inline bool is_quantized_op(const std::string& op) {
  return op == "QuantizeLinear" || op == "DequantizeLinear" || op == "QLinearConv" || op == "QLinearMatMul" ||
         op == "ConvInteger" || op == "MatMulInteger" || op == "Cast" || op == "DynamicQuantizeLinear";
}

// A tensor's quantization: one scale and zero point, or one per output channel (weights).
struct QuantInfo {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;   // same size as scale
  DType dtype = DType::u8;           // of the quantized data
};

struct Int8Match {
  enum class Kind { conv, matmul };
  Kind kind = Kind::conv;
  NodeId anchor = kNoNode;            // Conv, MatMul, Gemm, QLinearConv or QLinearMatMul
  std::vector<NodeId> nodes;          // absorbed by the group (not the source DQ), ascending
  NodeId src_dq = kNoNode;            // the source's DequantizeLinear (QDQ form)
  ValueId x = kNoValue, w = kNoValue, out = kNoValue;   // quantized source, s8 weights, quantized result
  QuantInfo xq, wq, yq;
  bool trans_b = false;               // Gemm's transB: weights stored [N, K]
  ValueId bias = kNoValue;            // a float bias in real units (function input or constant)
  std::vector<float> bias_acc;        // or a bias already in accumulator units (s32 bias), or empty
  // Relu (lo 0, hi +inf) or Clip(lo, hi) between the anchor and the QuantizeLinear, in real units.
  std::optional<std::pair<float, float>> clip;
};

// A quantized residual sum, as ONNX Runtime's QLinearAdd:
//   y = QuantizeLinear([Relu | Clip](DequantizeLinear(a) + DequantizeLinear(b)))
// every quantization per tensor, a and b of one shape. oneDNN 2.x's binary primitive takes no
// zero points, so it runs as one host pass with ref's float arithmetic, element by element
// (onednn_host_quant.h): exact, and one pass over the bytes where the nodes alone made four.
struct QAddMatch {
  NodeId add = kNoNode;
  std::vector<NodeId> nodes;            // absorbed: the Add, the activation, the QuantizeLinear
  NodeId a_dq = kNoNode, b_dq = kNoNode;
  ValueId a = kNoValue, b = kNoValue, out = kNoValue;
  QuantInfo aq, bq, yq;
  std::optional<std::pair<float, float>> clip;   // as Int8Match
};
std::optional<QAddMatch> match_qadd(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, NodeId add);

// The group whose anchor is node `n` (Conv, MatMul, Gemm, QLinearConv, QLinearMatMul), or nullopt
// with `why` set when n looks like one but oneDNN cannot take it (why stays empty when n is not
// quantized at all).
std::optional<Int8Match> match_int8(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, NodeId n,
                                    std::string* why = nullptr);

// Scale and zero point of a QuantizeLinear / DequantizeLinear node, from its constants; nullopt
// when they are not constants, or not per tensor unless `per_axis`.
std::optional<QuantInfo> node_quant(const Graph& fn, const Node& node, bool per_axis = false);

}  // namespace tessera::onednn
