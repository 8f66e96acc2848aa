#include "emit/module_onnx.h"

#include <set>

#include "emit/module_printer.h"
#include "frontend/onnx_export.h"

namespace tessera {
namespace {

onnx::NodeProto constant_node(const Value& c) {
  Tensor t{c.type, c.data};
  if (!t.data) t.data = std::make_shared<TensorBytes>(c.type.bytes(), uint8_t{0});
  onnx::NodeProto p;
  p.set_name("const_" + c.name);
  p.set_op_type("Constant");
  p.add_output(c.name);
  *p.add_attribute() = attribute_to_onnx("value", t);
  return p;
}

onnx::FunctionProto function_to_onnx(const Function& fn, const std::string& domain, int opset) {
  const Graph& body = fn.body;
  onnx::FunctionProto f;
  f.set_name(fn.symbol);
  f.set_domain(domain);
  f.set_doc_string("attrs " + print_attrs(fn.attrs));
  for (ValueId v : body.inputs) f.add_input(body.value(v).name);
  for (ValueId v : body.outputs) f.add_output(body.value(v).name);
  for (const Value& v : body.values)
    if (v.is_constant()) *f.add_node() = constant_node(v);
  std::map<std::string, std::string> composite_of;
  for (const CompositeFunction& c : fn.composites)
    for (const std::string& n : c.nodes) composite_of[n] = print_attrs(c.attrs);
  std::set<std::string> domains{""};
  for (const Node& n : body.nodes) {
    onnx::NodeProto p = node_to_onnx(body, n);
    if (auto it = composite_of.find(n.name); it != composite_of.end()) p.set_doc_string("Composite " + it->second);
    *f.add_node() = std::move(p);
    domains.insert(n.domain);
  }
  for (const std::string& d : domains) {
    auto* op = f.add_opset_import();
    op->set_domain(d);
    op->set_version(d.empty() ? opset : 1);
  }
  return f;
}

}  // namespace

onnx::ModelProto module_to_onnx(const Module& module) {
  onnx::ModelProto m = graph_to_onnx(module.main);
  m.set_ir_version(std::max<int64_t>(m.ir_version(), 8));
  m.set_doc_string("tessera partitioned module: one local function per outlined function, domain = backend");
  std::map<std::string, std::string> domain_of;   // symbol -> its calls' domain (its backend)
  for (const Node& n : module.main.nodes)
    if (module.is_call(n)) domain_of[n.op] = n.domain;
  std::set<std::string> domains;
  for (const auto& [symbol, fn] : module.functions) {
    std::string domain = domain_of.count(symbol) ? domain_of[symbol] : (fn.backend().empty() ? "extern" : fn.backend());
    *m.add_functions() = function_to_onnx(fn, domain, module.main.opset);
    domains.insert(domain);
    for (const Node& n : fn.body.nodes)
      if (!n.domain.empty()) domains.insert(n.domain);
  }
  for (const std::string& d : domains) {
    auto* op = m.add_opset_import();
    op->set_domain(d);
    op->set_version(1);
  }
  return m;
}

}  // namespace tessera
