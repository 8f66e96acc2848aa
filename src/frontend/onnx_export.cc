#include "tessera/onnx_export.h"

#include <algorithm>
#include <type_traits>

namespace tessera {

onnx::ValueInfoProto value_info_to_onnx(const std::string& name, const TensorType& t) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype_to_onnx(t.dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : t.shape) shape->add_dim()->set_dim_value(d);
  return vi;
}

namespace {

// A sub-graph as ONNX has it: no inputs (an If branch reads the enclosing graph's values by name,
// and tessera's body inputs carry those names), its constants as initializers.
onnx::GraphProto subgraph_to_onnx(const Graph& body) {
  onnx::GraphProto gp = graph_to_onnx(body, true).graph();
  gp.clear_input();
  return gp;
}

}  // namespace

onnx::AttributeProto attribute_to_onnx(const std::string& name, const Attribute& a) {
  onnx::AttributeProto p;
  p.set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          p.set_type(onnx::AttributeProto::INT);
          p.set_i(v);
        } else if constexpr (std::is_same_v<T, double>) {
          p.set_type(onnx::AttributeProto::FLOAT);
          p.set_f(static_cast<float>(v));
        } else if constexpr (std::is_same_v<T, std::string>) {
          p.set_type(onnx::AttributeProto::STRING);
          p.set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          p.set_type(onnx::AttributeProto::INTS);
          for (int64_t x : v) p.add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          p.set_type(onnx::AttributeProto::FLOATS);
          for (double x : v) p.add_floats(static_cast<float>(x));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          p.set_type(onnx::AttributeProto::STRINGS);
          for (const auto& x : v) p.add_strings(x);
        } else if constexpr (std::is_same_v<T, GraphAttr>) {
          p.set_type(onnx::AttributeProto::GRAPH);
          if (v.graph) *p.mutable_g() = subgraph_to_onnx(*v.graph);
        } else {
          p.set_type(onnx::AttributeProto::TENSOR);
          *p.mutable_t() = tensor_to_onnx("", v);
        }
      },
      a);
  return p;
}

onnx::NodeProto node_to_onnx(const Graph& g, const Node& n) {
  onnx::NodeProto p;
  p.set_name(n.name);
  p.set_op_type(n.op);
  if (!n.domain.empty()) p.set_domain(n.domain);
  // An If's inputs after the condition are what its branches capture: ONNX names them inside.
  const size_t formal = n.op == "If" && n.domain.empty() ? std::min<size_t>(1, n.inputs.size()) : n.inputs.size();
  for (size_t i = 0; i < formal; ++i) p.add_input(n.inputs[i] == kNoValue ? "" : g.value(n.inputs[i]).name);
  for (ValueId v : n.outputs) p.add_output(g.value(v).name);
  for (const auto& [name, a] : n.attrs) *p.add_attribute() = attribute_to_onnx(name, a);
  return p;
}

onnx::ModelProto graph_to_onnx(const Graph& g, bool fill_shape_only) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tessera");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(g.opset);
  auto* gp = m.mutable_graph();
  gp->set_name(g.name.empty() ? "main" : g.name);
  for (ValueId v : g.inputs) *gp->add_input() = value_info_to_onnx(g.value(v).name, g.value(v).type);
  for (const Value& v : g.values) {
    if (!v.is_constant()) continue;
    if (v.data || fill_shape_only)
      *gp->add_initializer() = tensor_to_onnx(v.name, Tensor{v.type, v.data});
    else
      *gp->add_input() = value_info_to_onnx(v.name, v.type);
  }
  for (const Node& n : g.nodes) {
    *gp->add_node() = node_to_onnx(g, n);
    for (ValueId out : n.outputs)
      if (!g.is_output(out)) *gp->add_value_info() = value_info_to_onnx(g.value(out).name, g.value(out).type);
  }
  for (ValueId v : g.outputs) *gp->add_output() = value_info_to_onnx(g.value(v).name, g.value(v).type);
  return m;
}

}  // namespace tessera
