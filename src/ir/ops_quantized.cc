// Quantization ops (ONNX's and the com.microsoft ones ONNX Runtime's quantization tool writes),
// classified as their float counterparts are: the conversions are per element with a scale that
// broadcasts along an axis (B), DynamicQuantizeLinear first reduces its input to a range (R), the
// integer and requantizing convolutions and products are out-elementwise-fusable (A) with the
// FLOPs of Conv and MatMul (an 8-bit multiply-add counts as 2, like a float one).
//   QuantizeLinear, DequantizeLinear:   2 per element (scale, shift)
//   DynamicQuantizeLinear:              4 per element (min, max, scale, shift)
//   ConvInteger, QLinearConv:           2 * prod(out) * prod(W[1:])
//   MatMulInteger, QLinearMatMul, ...:  2 * prod(out) * K
//   QLinearAdd, QLinearMul:             4 per element (two dequantizations, the op, a quantization);
//   QLinearSigmoid 8 (4 for the sigmoid, as Sigmoid); QLinearGlobalAveragePool 1 per input element
#include "ir/op_table.h"

namespace tessera::detail {
namespace {

double product_from(const Shape& s, size_t from) {
  double p = 1;
  for (size_t i = from; i < s.size(); ++i) p *= static_cast<double>(s[i]);
  return p;
}

NodeCostFn per_element(double k) {
  return [k](const Graph& g, const Node& n) { return k * static_cast<double>(in_numel(g, n)); };
}

// W is the input at `w_index`: [M, C/group, k...]; each output element is a dot of prod(W[1:]).
NodeCostFn integer_conv_flops(size_t w_index) {
  return [w_index](const Graph& g, const Node& n) {
    const Shape& w = in_shape(g, n, w_index);
    return w.size() < 3 ? 0.0 : 2.0 * static_cast<double>(out_numel(g, n)) * product_from(w, 1);
  };
}

double integer_matmul_flops(const Graph& g, const Node& n) {
  const Shape& a = in_shape(g, n, 0);
  return a.empty() ? 0.0 : 2.0 * static_cast<double>(out_numel(g, n)) * static_cast<double>(a.back());
}

}  // namespace

void register_quantized_ops(OpTable& t) {
  t.add("QuantizeLinear", OpKind::Broadcast, per_element(2));
  t.add("DequantizeLinear", OpKind::Broadcast, per_element(2));
  t.add("DynamicQuantizeLinear", OpKind::Reduction, per_element(4));
  t.add("ConvInteger", OpKind::OutEWiseFusable, integer_conv_flops(1));
  t.add("QLinearConv", OpKind::OutEWiseFusable, integer_conv_flops(3));
  t.add("MatMulInteger", OpKind::OutEWiseFusable, integer_matmul_flops);
  t.add("QLinearMatMul", OpKind::OutEWiseFusable, integer_matmul_flops);
  // com.microsoft (ONNX Runtime's quantization tool).
  t.add("QLinearAdd", OpKind::Broadcast, per_element(4));
  t.add("QLinearMul", OpKind::Broadcast, per_element(4));
  t.add("QLinearSigmoid", OpKind::Elementwise, per_element(8));
  t.add("QLinearGlobalAveragePool", OpKind::Reduction, per_element(1));
  t.add("MatMulIntegerToFloat", OpKind::OutEWiseFusable, integer_matmul_flops);
  t.add("DynamicQuantizeMatMul", OpKind::OutEWiseFusable, integer_matmul_flops);
}

}  // namespace tessera::detail
