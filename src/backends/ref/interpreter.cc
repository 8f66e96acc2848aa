// The node-by-node interpreter (see interpreter.h).
#include "backends/ref/interpreter.h"

#include <utility>

namespace tessera {

std::vector<HostTensor> interpret(const Graph& g, const KernelRegistry& kernels,
                                  const std::map<ValueId, HostTensor>& bindings) {
  std::vector<HostTensor> values(g.values.size());
  std::vector<char> ready(g.values.size(), 0);
  for (const auto& [id, t] : bindings) {
    if (id < 0 || static_cast<size_t>(id) >= g.values.size()) throw KernelError("interpret: binding for unknown value");
    if (t.type != g.value(id).type)
      throw KernelError("interpret: value '" + g.value(id).name + "' is " + to_string(g.value(id).type) +
                        ", its binding is " + to_string(t.type));
    values[static_cast<size_t>(id)] = t;
    ready[static_cast<size_t>(id)] = 1;
  }
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    if (ready[v] || !val.is_constant() || !val.data) continue;
    values[v] = HostTensor::from_tensor(Tensor{val.type, val.data});
    ready[v] = 1;
  }
  std::vector<ConstTensorView> ins;
  std::vector<TensorView> outs;
  for (const Node& node : g.nodes) {
    ins.clear();
    outs.clear();
    for (ValueId v : node.inputs) {
      if (v == kNoValue) {
        ins.push_back(ConstTensorView::missing());
        continue;
      }
      if (!ready[static_cast<size_t>(v)])
        throw KernelError("interpret: node '" + node.name + "' reads '" + g.value(v).name + "', which has no value");
      ins.push_back(std::as_const(values[static_cast<size_t>(v)]).view());
    }
    for (ValueId v : node.outputs) {
      if (v == kNoValue) {
        outs.push_back(TensorView{});
        continue;
      }
      values[static_cast<size_t>(v)] = HostTensor(g.value(v).type);
      outs.push_back(values[static_cast<size_t>(v)].view());
    }
    kernels.run(node, ins, outs);
    for (ValueId v : node.outputs)
      if (v != kNoValue) ready[static_cast<size_t>(v)] = 1;
  }
  return values;
}

}  // namespace tessera
