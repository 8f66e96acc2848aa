#include "tessera/printer.h"

#include <sstream>

namespace tessera {

std::string value_ref(const Graph& g, ValueId v) {
  if (v == kNoValue) return "_";
  const Value& val = g.value(v);
  if (val.kind != ValueKind::Intermediate) return "%" + val.name;
  std::string ref = "%" + std::to_string(val.producer);
  if (g.node(val.producer).outputs.size() > 1) ref += "." + std::to_string(val.producer_output);
  return ref;
}

std::string print_graph(const Graph& g) {
  std::ostringstream os;
  os << "graph " << (g.name.empty() ? "main" : g.name) << "(";
  for (size_t i = 0; i < g.inputs.size(); ++i)
    os << (i ? ", " : "") << value_ref(g, g.inputs[i]) << ": " << to_string(g.value(g.inputs[i]).type);
  os << ") {\n";
  for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v) {
    const Value& val = g.value(v);
    if (!val.is_constant()) continue;
    os << "  " << value_ref(g, v) << " = constant " << to_string(val.type);
    if (val.is_weight()) os << " weight";
    if (!val.data) os << " shape-only";
    os << "\n";
  }
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    os << "  ";
    if (node.outputs.size() == 1) os << value_ref(g, node.outputs[0]) << " = ";
    else os << "%" << n << " = ";
    os << (node.domain.empty() ? "" : node.domain + ".") << node.op << "(";
    for (size_t i = 0; i < node.inputs.size(); ++i) os << (i ? ", " : "") << value_ref(g, node.inputs[i]);
    os << ")";
    if (!node.attrs.empty()) {
      os << " {";
      bool first = true;
      for (const auto& [k, a] : node.attrs) {
        os << (first ? "" : ", ") << k << "=" << attribute_to_string(a);
        first = false;
      }
      os << "}";
    }
    os << " /* " << node.name << ", ty=";
    for (size_t i = 0; i < node.outputs.size(); ++i) os << (i ? ", " : "") << to_string(g.value(node.outputs[i]).type);
    os << " */\n";
  }
  os << "  return ";
  for (size_t i = 0; i < g.outputs.size(); ++i) os << (i ? ", " : "") << value_ref(g, g.outputs[i]);
  os << "\n}\n";
  return os.str();
}

}  // namespace tessera
