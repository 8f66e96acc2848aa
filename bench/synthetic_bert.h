// A synthetic BERT-style encoder built in C++, for benchmarks that need graphs of any size.
//
// 50 nodes per layer, in the shape exporters write: Q/K/V projections (MatMul+Add+Reshape+
// Transpose), scores MatMul/Div/Add/Softmax, context MatMul/Transpose/Reshape, output projection
// + residual, decomposed LayerNorm (9 nodes), FFN with erf-GELU, residual, LayerNorm. All values
// are f32[128,256] and weights are shape-only constants: enough for candidates, costs and search,
// not for running. bert(20) has 1,000 nodes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/graph.h"

namespace tessera::bench {

class Builder {
 public:
  ValueId input() {
    ValueId v = g.add_value(Value{"x", type(), ValueKind::Input});
    g.inputs.push_back(v);
    return v;
  }
  ValueId weight() { return g.add_value(Value{"w" + std::to_string(g.values.size()), type(), ValueKind::Constant}); }
  ValueId op(const std::string& op, std::vector<ValueId> in) {
    ValueId out = g.add_value(Value{"v" + std::to_string(g.values.size()), type(), ValueKind::Intermediate});
    Node n;
    n.name = op + "_" + std::to_string(g.nodes.size());
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    g.add_node(std::move(n));
    return out;
  }
  static TensorType type() { return TensorType{DType::f32, {128, 256}}; }
  Graph g;
};

inline ValueId layer_norm(Builder& b, ValueId x) {  // 9 nodes
  ValueId mean = b.op("ReduceMean", {x});
  ValueId d = b.op("Sub", {x, mean});
  ValueId var = b.op("ReduceMean", {b.op("Pow", {d, b.weight()})});
  ValueId sd = b.op("Sqrt", {b.op("Add", {var, b.weight()})});
  ValueId scaled = b.op("Mul", {b.op("Div", {d, sd}), b.weight()});
  return b.op("Add", {scaled, b.weight()});
}

inline ValueId projection(Builder& b, ValueId x) {  // 4 nodes
  ValueId biased = b.op("Add", {b.op("MatMul", {x, b.weight()}), b.weight()});
  return b.op("Transpose", {b.op("Reshape", {biased, b.weight()})});
}

inline ValueId encoder_layer(Builder& b, ValueId x) {  // 50 nodes
  ValueId q = projection(b, x), k = projection(b, x), v = projection(b, x);
  ValueId scaled = b.op("Div", {b.op("MatMul", {q, k}), b.weight()});
  ValueId probs = b.op("Softmax", {b.op("Add", {scaled, b.weight()})});
  ValueId ctx = b.op("MatMul", {probs, v});
  ValueId merged = b.op("Reshape", {b.op("Transpose", {ctx}), b.weight()});
  ValueId out = b.op("Add", {b.op("MatMul", {merged, b.weight()}), b.weight()});
  ValueId h = layer_norm(b, b.op("Add", {out, x}));
  ValueId up = b.op("Add", {b.op("MatMul", {h, b.weight()}), b.weight()});
  ValueId erf = b.op("Erf", {b.op("Div", {up, b.weight()})});
  ValueId gelu = b.op("Mul", {b.op("Mul", {up, b.op("Add", {erf, b.weight()})}), b.weight()});
  ValueId down = b.op("Add", {b.op("MatMul", {gelu, b.weight()}), b.weight()});
  return layer_norm(b, b.op("Add", {down, h}));
}

inline Graph bert(int layers) {
  Builder b;
  ValueId x = b.input();
  for (int i = 0; i < layers; ++i) x = encoder_layer(b, x);
  b.g.outputs.push_back(x);
  return std::move(b.g);
}

}  // namespace tessera::bench
