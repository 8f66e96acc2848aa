#include "frontend/printer.h"

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

std::string print_node_head(const Graph& g, NodeId n, const std::string& op_text) {
  const Node& node = g.node(n);
  std::ostringstream os;
  if (node.outputs.size() == 1) os << value_ref(g, node.outputs[0]) << " = ";
  else os << "%" << n << " = ";
  if (!op_text.empty()) os << op_text;
  else os << (node.domain.empty() ? "" : node.domain + ".") << node.op;
  os << "(";
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
  return os.str();
}

std::string print_output_types(const Graph& g, NodeId n) {
  std::string out;
  const Node& node = g.node(n);
  for (size_t i = 0; i < node.outputs.size(); ++i) out += (i ? ", " : "") + to_string(g.value(node.outputs[i]).type);
  return out;
}

std::string print_constants(const Graph& g, const std::string& indent) {
  std::string out;
  for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v) {
    const Value& val = g.value(v);
    if (!val.is_constant()) continue;
    out += indent + value_ref(g, v) + " = constant " + to_string(val.type);
    if (val.is_weight()) out += " weight";
    if (!val.data) out += " shape-only";
    out += "\n";
  }
  return out;
}

std::string print_graph(const Graph& g) {
  std::ostringstream os;
  os << "graph " << (g.name.empty() ? "main" : g.name) << "(";
  for (size_t i = 0; i < g.inputs.size(); ++i)
    os << (i ? ", " : "") << value_ref(g, g.inputs[i]) << ": " << to_string(g.value(g.inputs[i]).type);
  os << ") {\n" << print_constants(g, "  ");
  for (NodeId n = 0; n < g.num_nodes(); ++n)
    os << "  " << print_node_head(g, n) << " /* " << g.node(n).name << ", ty=" << print_output_types(g, n) << " */\n";
  os << "  return ";
  for (size_t i = 0; i < g.outputs.size(); ++i) os << (i ? ", " : "") << value_ref(g, g.outputs[i]);
  os << "\n}\n";
  return os.str();
}

}  // namespace tessera
