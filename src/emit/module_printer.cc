#include "emit/module_printer.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "frontend/printer.h"

namespace tessera {
namespace {

bool is_integer(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string signature(const Graph& g) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < g.inputs.size(); ++i)
    os << (i ? ", " : "") << value_ref(g, g.inputs[i]) << ": " << to_string(g.value(g.inputs[i]).type);
  os << ") -> ";
  if (g.outputs.size() != 1) os << "(";
  for (size_t i = 0; i < g.outputs.size(); ++i) os << (i ? ", " : "") << to_string(g.value(g.outputs[i]).type);
  if (g.outputs.size() != 1) os << ")";
  return os.str();
}

void print_node(std::ostream& os, const Graph& g, NodeId n, const std::string& indent, const Module* module) {
  const Node& node = g.node(n);
  const Function* callee = module ? module->callee(node) : nullptr;
  os << indent << print_node_head(g, n, callee ? "@" + node.op : "") << " /* " << node.name;
  if (callee && module->outlined_from.count(node.name)) {
    const auto& from = module->outlined_from.at(node.name);
    os << " <- ";
    for (size_t i = 0; i < from.size(); ++i) os << (i ? "+" : "") << from[i];
  }
  os << ", ty=" << print_output_types(g, n) << " */\n";
}

// Constants, nodes (composite groups as nested fn blocks) and the return line of a body.
void print_body(std::ostream& os, const Graph& g, const std::vector<CompositeFunction>& composites,
                const Module* module) {
  os << print_constants(g, "  ");
  std::map<std::string, const CompositeFunction*> composite_of;
  for (const CompositeFunction& c : composites)
    for (const std::string& n : c.nodes) composite_of[n] = &c;
  const CompositeFunction* open = nullptr;
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    auto it = composite_of.find(g.node(n).name);
    const CompositeFunction* c = it == composite_of.end() ? nullptr : it->second;
    if (c != open) {
      if (open) os << "  }\n";
      if (c) os << "  fn attrs " << print_attrs(c->attrs) << " {\n";
      open = c;
    }
    print_node(os, g, n, open ? "    " : "  ", module);
  }
  if (open) os << "  }\n";
  os << "  return ";
  for (size_t i = 0; i < g.outputs.size(); ++i) os << (i ? ", " : "") << value_ref(g, g.outputs[i]);
  os << "\n";
}

}  // namespace

std::string print_attrs(const FunctionAttrs& attrs) {
  std::ostringstream os;
  os << "{";
  bool first = true;
  for (const auto& [k, v] : attrs) {
    os << (first ? "" : ", ") << k << "=" << (is_integer(v) ? v : "\"" + v + "\"");
    first = false;
  }
  os << "}";
  return os.str();
}

std::string print_lowered(const LoweredFunction& lf) {
  std::ostringstream os;
  os << "  lowered {\n";
  for (size_t b = 0; b < lf.buffers.size(); ++b) {
    const Buffer& buf = lf.buffers[b];
    os << "    #" << b << " " << buffer_kind_name(buf.kind) << " %" << buf.name << ": " << to_string(buf.type) << ", "
       << buf.type.bytes() << " B";
    if (buf.kind == BufferKind::Workspace) os << " @" << buf.offset << " live " << buf.first << ".." << buf.last;
    os << "\n";
  }
  for (size_t c = 0; c < lf.calls.size(); ++c) {
    const KernelCall& call = lf.calls[c];
    os << "    " << c << ": " << call.kernel << "(";
    for (size_t i = 0; i < call.inputs.size(); ++i)
      os << (i ? ", " : "") << (call.inputs[i] < 0 ? std::string("_") : "#" + std::to_string(call.inputs[i]));
    os << ") -> (";
    for (size_t i = 0; i < call.outputs.size(); ++i) os << (i ? ", " : "") << "#" << call.outputs[i];
    os << ") /* " << call.label << " */\n";
  }
  size_t workspace_buffers = std::count_if(lf.buffers.begin(), lf.buffers.end(),
                                           [](const Buffer& b) { return b.kind == BufferKind::Workspace; });
  os << "    memory: workspace " << lf.memory.workspace_bytes << " B for " << workspace_buffers
     << " buffers totalling " << lf.memory.sum_bytes << " B (alignment " << lf.memory.alignment << ")\n";
  os << "  }\n";
  return os.str();
}

std::string print_function(const Function& fn) {
  std::ostringstream os;
  if (fn.is_extern()) {
    os << "extern def @" << fn.symbol << signature(fn.body) << " attrs " << print_attrs(fn.attrs) << "\n";
    return os.str();
  }
  os << "def @" << fn.symbol << signature(fn.body) << "\n    attrs " << print_attrs(fn.attrs) << " {\n";
  print_body(os, fn.body, fn.composites, nullptr);
  if (fn.lowered) os << print_lowered(*fn.lowered);
  os << "}\n";
  return os.str();
}

std::string print_module(const Module& m) {
  std::ostringstream os;
  os << "def @main(";
  for (size_t i = 0; i < m.main.inputs.size(); ++i)
    os << (i ? ", " : "") << value_ref(m.main, m.main.inputs[i]) << ": " << to_string(m.main.value(m.main.inputs[i]).type);
  os << ") {\n";
  print_body(os, m.main, {}, &m);
  if (m.main_lowered) os << print_lowered(*m.main_lowered);
  os << "}\n";
  for (const auto& [symbol, fn] : m.functions) os << "\n" << print_function(fn);
  if (!m.external_modules.empty()) {
    os << "\nexternal_modules {\n";
    for (const auto& [symbol, ext] : m.external_modules)
      os << "  @" << symbol << ": " << ext.backend << (ext.summary.empty() ? "" : ", " + ext.summary) << "\n";
    os << "}\n";
  }
  return os.str();
}

}  // namespace tessera
