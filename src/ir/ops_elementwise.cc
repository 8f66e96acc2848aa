// Elementwise (E) and broadcast (B) ops: one FLOP per output element, a few for transcendental
// activations whose kernels are polynomial evaluations (counted as 4; a convention, documented in
// docs/formats.md, not a measurement).
#include "ir/op_table.h"

namespace tessera::detail {

void register_elementwise_ops(OpTable& t) {
  auto per_output = [](double k) {
    return [k](const Graph& g, const Node& n) { return k * static_cast<double>(out_numel(g, n)); };
  };
  for (const char* op : {"Relu", "Abs", "Neg", "Clip", "LeakyRelu", "HardSigmoid", "HardSwish", "Reciprocal",
                         "Floor", "Ceil", "Round", "Sign", "Not", "Sqrt", "Elu", "Selu", "PRelu"})
    t.add(op, OpKind::Elementwise, per_output(1));
  for (const char* op : {"Sigmoid", "Tanh", "Exp", "Log", "Erf", "Softplus", "Sin", "Cos", "Gelu", "Mish"})
    t.add(op, OpKind::Elementwise, per_output(4));
  for (const char* op : {"Cast", "Identity", "Dropout"}) t.add(op, OpKind::Elementwise);

  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "Mod", "Equal", "Less", "Greater",
                         "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Sum", "Mean", "Where"})
    t.add(op, OpKind::Broadcast, per_output(1));
  t.add("Pow", OpKind::Broadcast, per_output(4));
}

}  // namespace tessera::detail
