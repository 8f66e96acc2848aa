#include "emit/module.h"

namespace tessera {

const char* buffer_kind_name(BufferKind k) {
  switch (k) {
    case BufferKind::Param: return "param";
    case BufferKind::Output: return "output";
    case BufferKind::Constant: return "const";
    case BufferKind::Workspace: return "workspace";
  }
  return "?";
}

std::string Function::backend() const {
  auto it = attrs.find(attr::kCompiler);
  return it == attrs.end() ? std::string() : it->second;
}

Module Module::from_graph(Graph graph) {
  Module m;
  m.main = std::move(graph);
  return m;
}

const Function* Module::find(const std::string& symbol) const {
  auto it = functions.find(symbol);
  return it == functions.end() ? nullptr : &it->second;
}

const Function* Module::callee(const Node& node) const {
  if (node.domain.empty()) return nullptr;   // calls carry their callee's backend as domain
  return find(node.op);
}

std::vector<std::string> Module::functions_of(const std::string& backend) const {
  std::vector<std::string> out;
  for (const auto& [symbol, fn] : functions)
    if (!fn.is_extern() && fn.backend() == backend) out.push_back(symbol);
  return out;
}

}  // namespace tessera
