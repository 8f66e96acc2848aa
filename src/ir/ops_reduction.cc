// Reduction (R) ops: reductions read every input element once (1 FLOP each); pooling does one
// FLOP per window element per output; Softmax ~5 per element (max, subtract, exp, sum, divide);
// normalisations ~8 per element (mean, variance, normalise, scale, shift).
#include "ir/op_table.h"

namespace tessera::detail {
namespace {

double pool_flops(const Graph& g, const Node& n) {
  double window = 1;
  for (int64_t k : attr_ints(n.attrs, "kernel_shape")) window *= static_cast<double>(k);
  return window * static_cast<double>(out_numel(g, n));
}

}  // namespace

void register_reduction_ops(OpTable& t) {
  auto per_input = [](double k) {
    return [k](const Graph& g, const Node& n) { return k * static_cast<double>(in_numel(g, n)); };
  };
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSumExp", "ArgMax", "ArgMin", "GlobalAveragePool",
                         "GlobalMaxPool"})
    t.add(op, OpKind::Reduction, per_input(1));
  t.add("Softmax", OpKind::Reduction, per_input(5));
  t.add("LogSoftmax", OpKind::Reduction, per_input(5));
  for (const char* op : {"LayerNormalization", "InstanceNormalization", "LpNormalization"})
    t.add(op, OpKind::Reduction, per_input(8));
  t.add("MaxPool", OpKind::Reduction, pool_flops);
  t.add("AveragePool", OpKind::Reduction, pool_flops);
}

}  // namespace tessera::detail
