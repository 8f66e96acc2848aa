#include "frontend/onnx_export.h"

#include <algorithm>
#include <cstring>
#include <limits>
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

// How many of node `n`'s last inputs are captures of its sub-graphs (control_flow.h): every input
// after an If's condition; a Loop's or Scan's `captured_inputs`. ONNX reads those by name instead.
size_t captured_inputs(const Node& n) {
  if (!n.domain.empty()) return 0;
  if (n.op == "If") return n.inputs.empty() ? 0 : n.inputs.size() - 1;
  if (n.op == "Loop" || n.op == "Scan") return static_cast<size_t>(std::max<int64_t>(0, attr_int(n.attrs, "captured_inputs", 0)));
  return 0;
}

// Sub-graph `body` of node `n` (of graph `outer`) as ONNX has it: its formal inputs (a Loop's
// iteration number, condition and carried values; an If branch has none), its constants as
// initializers. Its last `captures` inputs are read from the enclosing scope by name, so each is
// renamed after the node input that feeds it: a copy of the node in an outlined function, whose
// values may have other names, still reads the right value.
onnx::GraphProto subgraph_to_onnx(const Graph& body, const Graph& outer, const Node& n, size_t captures) {
  Graph named = body;
  const size_t formal = body.inputs.size() >= captures ? body.inputs.size() - captures : 0;
  for (size_t k = formal, j = n.inputs.size() - captures; k < body.inputs.size() && j < n.inputs.size(); ++k, ++j)
    if (n.inputs[j] != kNoValue) named.value(body.inputs[k]).name = outer.value(n.inputs[j]).name;
  onnx::GraphProto gp = graph_to_onnx(named, true).graph();
  gp.clear_input();
  for (size_t k = 0; k < formal; ++k)
    *gp.add_input() = value_info_to_onnx(named.value(body.inputs[k]).name, named.value(body.inputs[k]).type);
  return gp;
}

// One element of type `t` that no result should pass for: NaN for floating-point types, else 0.
Tensor poison_element(DType t) {
  auto bytes = std::make_shared<TensorBytes>(dtype_size(t), uint8_t{0});
  auto put = [&](auto v) { std::memcpy(bytes->data(), &v, sizeof v); };
  switch (t) {
    case DType::f32: put(std::numeric_limits<float>::quiet_NaN()); break;
    case DType::f64: put(std::numeric_limits<double>::quiet_NaN()); break;
    case DType::f16: put(uint16_t{0x7E00}); break;
    case DType::bf16: put(uint16_t{0x7FC0}); break;
    default: break;
  }
  return Tensor{TensorType{t, {1}}, bytes};
}

// An If branch import left out (it does not type at the bound input shapes; the attribute holds
// why, control_flow.h) as ONNX needs one, a graph: each output of the node filled with
// poison_element (ConstantOfShape), the reason as its doc_string. tessera never runs it (choosing
// it is exit 2); another runtime that does gets NaN, not a plausible result.
onnx::GraphProto left_out_branch(const Graph& g, const Node& n, const std::string& attr, const std::string& why) {
  onnx::GraphProto gp;
  gp.set_name(n.name + "_" + attr + "_left_out");
  gp.set_doc_string("left out by tessera: " + why);
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const TensorType& t = g.value(n.outputs[k]).type;
    const std::string out = gp.name() + "_output_" + std::to_string(k);
    const Tensor one = poison_element(t.dtype);
    onnx::NodeProto* fill = gp.add_node();
    fill->set_name(out);
    fill->add_output(out);
    if (g.opset >= 9) {   // ConstantOfShape(shape) {value}: small whatever the output's size
      const std::string shape = out + "_shape";
      auto dims = std::make_shared<TensorBytes>(t.shape.size() * sizeof(int64_t));
      if (!t.shape.empty()) std::memcpy(dims->data(), t.shape.data(), dims->size());
      *gp.add_initializer() = tensor_to_onnx(shape, Tensor{TensorType{DType::i64, {t.rank()}}, dims});
      fill->set_op_type("ConstantOfShape");
      fill->add_input(shape);
      *fill->add_attribute() = attribute_to_onnx("value", one);
    } else {              // opsets 7-8 have no ConstantOfShape: the whole tensor as a Constant
      auto all = std::make_shared<TensorBytes>();
      for (int64_t i = 0; i < t.numel(); ++i) all->insert(all->end(), one.data->begin(), one.data->end());
      fill->set_op_type("Constant");
      *fill->add_attribute() = attribute_to_onnx("value", Tensor{t, all});
    }
    *gp.add_output() = value_info_to_onnx(out, t);
  }
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
          // A body with every input formal; node_to_onnx knows which are captures.
          p.set_type(onnx::AttributeProto::GRAPH);
          if (v.graph) *p.mutable_g() = graph_to_onnx(*v.graph, true).graph();
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
  const size_t captures = captured_inputs(n);
  for (size_t i = 0; i + captures < n.inputs.size(); ++i) p.add_input(n.inputs[i] == kNoValue ? "" : g.value(n.inputs[i]).name);
  for (ValueId v : n.outputs) p.add_output(g.value(v).name);
  for (const auto& [name, a] : n.attrs) {
    if ((n.op == "Loop" || n.op == "Scan") && n.domain.empty() && name == "captured_inputs") continue;   // tessera's, not ONNX's
    const GraphAttr* body = std::get_if<GraphAttr>(&a);
    const std::string* left_out = std::get_if<std::string>(&a);
    const bool branch = n.op == "If" && n.domain.empty() && (name == "then_branch" || name == "else_branch");
    if (!(body && body->graph) && !(branch && left_out)) {
      *p.add_attribute() = attribute_to_onnx(name, a);
      continue;
    }
    onnx::AttributeProto sub;
    sub.set_name(name);
    sub.set_type(onnx::AttributeProto::GRAPH);
    *sub.mutable_g() = body ? subgraph_to_onnx(*body->graph, g, n, captures) : left_out_branch(g, n, name, *left_out);
    *p.add_attribute() = std::move(sub);
  }
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
