#include "frontend/shape_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <regex>
#include <set>

#include "frontend/constant_folding.h"
#include "frontend/contrib_schemas.h"
#include "tessera/error.h"
#include "ir/limits.h"
#include "frontend/onnx_export.h"

namespace tessera::detail {
namespace {

// Constants up to this many elements travel with their data (shape computations need it), folded
// ones included (constant_folding.h).
constexpr int64_t kInlineConstantElements = kMaxFoldElements;

onnx::ModelProto inference_model(const Graph& g, const std::vector<char>& known, const std::vector<char>& skip) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  std::set<std::string> domains;
  for (const Node& n : g.nodes)
    if (!n.domain.empty()) domains.insert(n.domain);
  auto* opset = m.add_opset_import();
  opset->set_version(g.opset);
  for (const auto& d : domains) {
    auto* o = m.add_opset_import();
    o->set_domain(d);
    o->set_version(1);
  }
  auto* gp = m.mutable_graph();
  gp->set_name("inference");
  for (ValueId v : g.inputs) *gp->add_input() = value_info_to_onnx(g.value(v).name, g.value(v).type);
  for (const Value& v : g.values) {
    if (!v.is_constant()) continue;
    if (v.data && v.type.numel() <= kInlineConstantElements)
      *gp->add_initializer() = tensor_to_onnx(v.name, Tensor{v.type, v.data});
    else
      *gp->add_input() = value_info_to_onnx(v.name, v.type);
  }
  std::vector<char> blocked(g.values.size(), 0);
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (skip[id]) continue;
    const Node& n = g.node(id);
    // Control flow is left out (its branches are built apart, control_flow.h); the types of its
    // outputs, once known, go in as declared types. Nodes that read an output still unknown wait
    // too (strict inference refuses an untyped input), and so do their readers.
    bool wait = n.domain.empty() && (n.op == "If" || n.op == "Loop" || n.op == "Scan");
    for (ValueId in : n.inputs) wait |= in != kNoValue && blocked[in];
    if (wait) {
      for (ValueId out : n.outputs) {
        if (known[out]) *gp->add_value_info() = value_info_to_onnx(g.value(out).name, g.value(out).type);
        else blocked[out] = 1;
      }
      continue;
    }
    *gp->add_node() = node_to_onnx(g, n);
    // Outputs of ops ONNX has no schema for keep their declared types, so inference can go on.
    bool has_schema = onnx::OpSchemaRegistry::Schema(n.op, n.domain.empty() ? g.opset : 1, n.domain) != nullptr;
    if (!has_schema)
      for (ValueId out : n.outputs)
        if (known[out]) *gp->add_value_info() = value_info_to_onnx(g.value(out).name, g.value(out).type);
  }
  for (ValueId v : g.outputs)
    if (!blocked[v]) gp->add_output()->set_name(g.value(v).name);
  return m;
}

// "[ShapeInferenceError] (op_type:Add, node name: s): A: ..." -> place "node 's'", the rest.
UserError inference_error(const std::string& file, const std::string& what) {
  static const std::regex re(R"(\(op_type:([^,]*), node name: ([^)]*)\):?\s*(.*))");
  std::smatch m;
  if (std::regex_search(what, m, re))
    return UserError(file, "node '" + m[2].str() + "' (" + m[1].str() + ")", "shape inference: " + m[3].str());
  return UserError(file, "", "shape inference: " + what);
}

std::optional<TensorType> to_tensor_type(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  auto dtype = dtype_from_onnx(t.tensor_type().elem_type());
  if (!dtype) return std::nullopt;
  TensorType out{*dtype, {}};
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    out.shape.push_back(d.dim_value());
  }
  return out;
}

// What ONNX's own inference does not check before it crashes (both found by fuzz_onnx,
// tests/inputs/bad/conv_weight_rank.onnx and pool_stride_zero.onnx): its convPoolShapeInference
// divides by the strides (a 0 is SIGFPE), and takes the kernel's spatial size from a Conv weight,
// indexing the (input rank - 2) dilations with it (a weight of another rank reads past an empty
// vector). The ranges are the ref kernels' own (src/backends/ref/window.cc).
void check_before_inference(const Graph& g, const std::vector<char>& known, const std::vector<char>& skip,
                            const std::string& file) {
  static const std::set<std::string> kWindowOps = {"Conv",    "ConvTranspose", "ConvInteger", "QLinearConv",
                                                   "MaxPool", "AveragePool",   "LpPool",      "MaxUnpool"};
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (skip[id] || !n.domain.empty() || !kWindowOps.count(n.op)) continue;
    const std::string place = "node '" + n.name + "' (" + n.op + ")";
    for (const char* name : {"kernel_shape", "strides", "dilations"})
      for (int64_t v : attr_ints(n.attrs, name, {}))
        if (v < 1 || v > kMaxTensorElements)
          throw UserError(file, place, std::string(name) + " " + std::to_string(v) + " is outside [1, 2^31)");
    for (int64_t v : attr_ints(n.attrs, "pads", {}))
      if (v < 0 || v > kMaxTensorElements) throw UserError(file, place, "pads " + std::to_string(v) + " is outside [0, 2^31)");
    if (n.op != "Conv" && n.op != "ConvTranspose" && n.op != "ConvInteger") continue;
    if (n.inputs.size() < 2 || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue) continue;
    if (!known[n.inputs[0]] || !known[n.inputs[1]]) continue;
    const Value& x = g.value(n.inputs[0]);
    const Value& w = g.value(n.inputs[1]);
    if (x.type.rank() != w.type.rank())
      throw UserError(file, place,
                      "weight '" + w.name + "' has rank " + std::to_string(w.type.rank()) + " but input '" + x.name +
                          "' has rank " + std::to_string(x.type.rank()) + "; they must be equal");
  }
}

}  // namespace

void infer_shapes(Graph& g, std::vector<char>& known, const std::vector<char>& skip, const std::string& file) {
  register_contrib_schemas();
  check_before_inference(g, known, skip, file);
  onnx::ModelProto m = inference_model(g, known, skip);
  try {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1,
                                                                   /*data_prop=*/true));
  } catch (const std::exception& e) {
    throw inference_error(file, e.what());
  }
  std::map<std::string, const onnx::TypeProto*> inferred;
  for (const auto& vi : m.graph().value_info()) inferred[vi.name()] = &vi.type();
  for (const auto& vi : m.graph().output())
    if (vi.has_type()) inferred[vi.name()] = &vi.type();

  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (skip[id]) continue;
    const Node& n = g.node(id);
    for (ValueId out : n.outputs) {
      Value& v = g.value(out);
      auto it = inferred.find(v.name);
      std::optional<TensorType> t = it == inferred.end() ? std::nullopt : to_tensor_type(*it->second);
      if (known[out]) {
        if (t && !(*t == v.type))
          throw UserError(file, "node '" + n.name + "'",
                          "output '" + v.name + "' is declared " + to_string(v.type) + " but " + n.op + " gives " +
                              to_string(*t));
        continue;
      }
      if (t) {
        v.type = *t;
        known[out] = 1;
      }
    }
  }
}

void require_known_types(const Graph& g, const std::vector<char>& known, const std::vector<char>& skip,
                         const std::string& file) {
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (skip[id]) continue;
    const Node& n = g.node(id);
    for (ValueId out : n.outputs) {
      if (known[out]) continue;
      // The inputs import could not evaluate (constant_folding.h): one of them decides the shape.
      std::string computed;
      for (ValueId in : n.inputs)
        if (in != kNoValue && !(g.value(in).is_constant() && g.value(in).data))
          computed += (computed.empty() ? "'" : ", '") + g.value(in).name + "'";
      throw UserError::mentioning(file, "node '" + n.name + "'",
                                  "cannot infer a static shape for output '" + g.value(out).name + "' of " + n.op +
                                      (computed.empty() ? "" : ", whose inputs computed at run time are " + computed) +
                                      " (bind symbolic inputs with " + mention("input_shapes") +
                                      ", or declare the output's type)");
    }
  }
}

}  // namespace tessera::detail
