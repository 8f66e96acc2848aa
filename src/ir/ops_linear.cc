// Out-elementwise-fusable (A) ops: the compute-heavy ones. FLOPs count a multiply-add as 2, plus
// one per output element for a bias. Shapes are the inferred static ones.
//   Conv:          2 * N * Cout * prod(out spatial) * (Cin / group) * prod(kernel) [+ bias]
//   ConvTranspose: 2 * N * Cin * prod(in spatial) * (Cout / group) * prod(kernel)  [+ bias]
//   MatMul:        2 * prod(out) * K            (K = last dim of A; batch dims broadcast)
//   Gemm:          2 * M * N * K [+ M * N for C]
//   BatchNormalization (inference): 2 per element (scale and shift)
//   RNN/GRU/LSTM (opaque: no backend but ref runs them): 2 * seq * batch * dirs * G * hidden *
//                  (input + hidden), G = 1, 3, 4 gates; the element-wise gate math is not counted
#include "ir/op_table.h"

namespace tessera::detail {
namespace {

double product(const Shape& s, size_t from) {
  double p = 1;
  for (size_t i = from; i < s.size(); ++i) p *= static_cast<double>(s[i]);
  return p;
}

bool has_bias(const Node& n, size_t index) { return n.inputs.size() > index && n.inputs[index] != kNoValue; }

double conv_flops(const Graph& g, const Node& n) {
  const Shape& x = in_shape(g, n, 0);
  const Shape& w = in_shape(g, n, 1);
  const Shape& y = out_shape(g, n, 0);
  if (x.size() < 3 || w.size() < 3 || y.size() < 3) return 0;
  double out_elems = static_cast<double>(out_numel(g, n));
  // W is [Cout, Cin/group, k...]: every output element is a dot product of length prod(w[1:]).
  double f = 2.0 * out_elems * product(w, 1);
  return has_bias(n, 2) ? f + out_elems : f;
}

double conv_transpose_flops(const Graph& g, const Node& n) {
  const Shape& x = in_shape(g, n, 0);
  const Shape& w = in_shape(g, n, 1);  // [Cin, Cout/group, k...]
  if (x.size() < 3 || w.size() < 3) return 0;
  double f = 2.0 * static_cast<double>(in_numel(g, n, 0)) * product(w, 1);
  return has_bias(n, 2) ? f + static_cast<double>(out_numel(g, n)) : f;
}

double matmul_flops(const Graph& g, const Node& n) {
  const Shape& a = in_shape(g, n, 0);
  if (a.empty()) return 0;
  double k = static_cast<double>(a.back());
  return 2.0 * static_cast<double>(out_numel(g, n)) * k;
}

double gemm_flops(const Graph& g, const Node& n) {
  const Shape& a = in_shape(g, n, 0);
  if (a.size() != 2) return 0;
  double k = static_cast<double>(attr_int(n.attrs, "transA", 0) ? a[0] : a[1]);
  double mn = static_cast<double>(out_numel(g, n));
  return 2.0 * mn * k + (has_bias(n, 2) ? mn : 0.0);
}

NodeCostFn recurrent_flops(double gates) {
  return [gates](const Graph& g, const Node& n) {
    const Shape& x = in_shape(g, n, 0);
    const Shape& w = in_shape(g, n, 1);  // [dirs, G * hidden, input]
    if (x.size() != 3 || w.size() != 3) return 0.0;
    const double hidden = static_cast<double>(w[1]) / gates;
    return 2.0 * static_cast<double>(x[0] * x[1]) * static_cast<double>(w[0]) * static_cast<double>(w[1]) *
           (static_cast<double>(w[2]) + hidden);
  };
}

}  // namespace

void register_linear_ops(OpTable& t) {
  t.add("Conv", OpKind::OutEWiseFusable, conv_flops);
  t.add("ConvTranspose", OpKind::OutEWiseFusable, conv_transpose_flops);
  t.add("MatMul", OpKind::OutEWiseFusable, matmul_flops);
  t.add("Gemm", OpKind::OutEWiseFusable, gemm_flops);
  t.add("BatchNormalization", OpKind::OutEWiseFusable,
        [](const Graph& g, const Node& n) { return 2.0 * static_cast<double>(out_numel(g, n)); });
  t.add("RNN", OpKind::Opaque, recurrent_flops(1));
  t.add("GRU", OpKind::Opaque, recurrent_flops(3));
  t.add("LSTM", OpKind::Opaque, recurrent_flops(4));
}

}  // namespace tessera::detail
