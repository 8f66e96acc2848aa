// ONNX import: ModelProto -> RawGraph -> build_graph.
//
// What this file handles beyond the shared builder: the protobuf itself (a truncated or corrupt
// file is a clear error), IR version and opset range (libonnx 1.12: IR <= 8, opsets 7-17),
// initializers (with external data), graph inputs that are also initializers (the initializer
// wins, as ONNX Runtime does), symbolic input dimensions (bound from ImportOptions::input_shapes, else 1 with a
// warning), and attributes. Sub-graph attributes (If's branches, Loop's body) become RawGraphs of
// their own, read the same way (initializers, nodes, outputs); their formal inputs (Loop's
// iteration number, condition and carried values) take the node's types where the file gives none.
#include <fstream>
#include <filesystem>
#include <set>
#include <sstream>

#include "frontend/graph_builder.h"
#include "tessera/error.h"
#include "tessera/model_loader.h"
#include "frontend/onnx_tensor.h"
#include "frontend/simplify.h"
#include "support/text.h"

namespace tessera {
namespace {

constexpr int kMinOpset = 7, kMaxOpset = 17, kMaxIrVersion = 8;

Attribute attribute_from_onnx(const onnx::AttributeProto& a, const std::string& where) {
  switch (a.type()) {
    case onnx::AttributeProto::INT: return a.i();
    case onnx::AttributeProto::FLOAT: return static_cast<double>(a.f());
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::FLOATS: return std::vector<double>(a.floats().begin(), a.floats().end());
    case onnx::AttributeProto::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case onnx::AttributeProto::TENSOR: return tensor_from_onnx(a.t(), where);
    case onnx::AttributeProto::GRAPH: return "graph:" + a.g().name();  // the body is in RawNode::subgraphs
    default: return "unsupported attribute type " + std::to_string(a.type());
  }
}

// An input whose symbolic dimensions were bound to 1 for want of an input_shapes binding.
using DefaultedInput = SymbolicInput;

TensorType input_type(const onnx::ValueInfoProto& vi, const ImportOptions& opt, const std::string& file,
                      const std::function<void(const std::string&)>& warn, std::vector<DefaultedInput>& defaulted) {
  const std::string where = "graph input '" + vi.name() + "'";
  if (!vi.type().has_tensor_type()) throw UserError(file, where, "is not a tensor");
  const auto& tt = vi.type().tensor_type();
  auto dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype) throw UserError(file, where, "element type " + std::to_string(tt.elem_type()) + " is not supported");
  TensorType t{*dtype, {}};
  auto bound = opt.input_shapes.find(vi.name());
  if (bound != opt.input_shapes.end()) {
    if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(bound->second.size()))
      throw UserError::mentioning(file, where, mention("input_shapes") + " gives rank " + std::to_string(bound->second.size()) +
                                                   ", the model says rank " + std::to_string(tt.shape().dim_size()));
    for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value() && d.dim_value() != bound->second[i])
        throw UserError::mentioning(file, where, mention("input_shapes") + " sets dimension " + std::to_string(i) + " to " +
                                                     std::to_string(bound->second[i]) + ", the model fixes it to " +
                                                     std::to_string(d.dim_value()));
    }
    t.shape = bound->second;
    return t;
  }
  if (!tt.has_shape()) throw UserError::mentioning(file, where, "has no shape; give it with " + mention("input_shapes", {{vi.name(), {}}}));
  std::vector<std::string> unbound;
  DefaultedInput record{vi.name(), {}, {}};
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      t.shape.push_back(d.dim_value());
      record.dims.push_back(std::to_string(d.dim_value()));
      record.symbolic.push_back(false);
    } else {
      unbound.push_back(d.has_dim_param() ? d.dim_param() : "?");
      t.shape.push_back(1);
      record.dims.push_back(unbound.back());
      record.symbolic.push_back(true);
    }
  }
  if (!unbound.empty()) {
    defaulted.push_back(std::move(record));
    std::string dims;
    for (const auto& u : unbound) dims += (dims.empty() ? "" : ", ") + u;
    const OptionSpelling& spell = opt.spelling ? opt.spelling : OptionSpelling(library_spelling);
    warn("input '" + vi.name() + "' has symbolic dimensions (" + dims + ") bound to 1; use " +
         spell(OptionMention{"input_shapes", {{vi.name(), t.shape}}}) + " to choose");
  }
  return t;
}

onnx::ModelProto read_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path, "", "cannot open the file");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  onnx::ModelProto m;
  if (bytes.empty() || !m.ParseFromString(bytes))
    throw UserError(path, "", "not a valid ONNX model (truncated or corrupt protobuf, " + std::to_string(bytes.size()) + " bytes)");
  if (!m.has_graph()) throw UserError(path, "", "the model has no graph");
  return m;
}

int default_opset(const onnx::ModelProto& m, const std::string& path) {
  if (m.ir_version() > kMaxIrVersion)
    throw UserError(path, "ir_version", "IR version " + std::to_string(m.ir_version()) + " is newer than tessera reads (at most " +
                                            std::to_string(kMaxIrVersion) + "); re-export with an older exporter");
  for (const auto& o : m.opset_import()) {
    if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
    if (o.version() < kMinOpset || o.version() > kMaxOpset)
      throw UserError(path, "opset_import", "opset " + std::to_string(o.version()) + " is outside the supported range " +
                                                std::to_string(kMinOpset) + "-" + std::to_string(kMaxOpset));
    return static_cast<int>(o.version());
  }
  throw UserError(path, "opset_import", "the model imports no default-domain opset");
}

// A sub-graph's formal input (Loop's iteration number, condition and carried values; If has
// none): its type when the file gives a static one, else nullopt and the node's types decide
// (control_flow.h). An element type tessera does not model is refused here.
std::optional<TensorType> body_input_type(const onnx::ValueInfoProto& vi, const std::string& file, const std::string& where) {
  const std::string place = where + ": input '" + vi.name() + "'";
  if (!vi.type().has_tensor_type()) {
    if (vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return std::nullopt;
    throw UserError(file, place, "is not a tensor");
  }
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() == onnx::TensorProto::UNDEFINED) return std::nullopt;
  auto dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype) throw UserError(file, place, "element type " + std::to_string(tt.elem_type()) + " is not supported");
  TensorType t{*dtype, {}};
  if (!tt.has_shape()) return std::nullopt;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    t.shape.push_back(d.dim_value());
  }
  return t;
}

void read_nodes(const onnx::GraphProto& gp, const std::string& path, const std::string& base_dir,
                const std::function<void(const std::string&)>& warn, const std::string& scope, detail::RawGraph& raw);

// A sub-graph attribute as a RawGraph: its initializers, formal inputs, nodes and outputs.
std::shared_ptr<const detail::RawGraph> body_from_onnx(const onnx::GraphProto& gp, const std::string& path,
                                                       const std::string& base_dir,
                                                       const std::function<void(const std::string&)>& warn,
                                                       const std::string& where, int opset) {
  auto raw = std::make_shared<detail::RawGraph>();
  raw->name = gp.name();
  raw->opset = opset;
  std::set<std::string> initializer_names;
  for (const auto& t : gp.initializer()) {
    initializer_names.insert(t.name());
    raw->constants.emplace_back(t.name(), tensor_from_onnx(t, path + ": " + where + ": initializer '" + t.name() + "'", base_dir, warn));
  }
  for (const auto& vi : gp.input()) {
    if (initializer_names.count(vi.name())) continue;
    std::optional<TensorType> t = body_input_type(vi, path, where);
    if (!t) raw->untyped_inputs.insert(vi.name());
    raw->inputs.emplace_back(vi.name(), t.value_or(TensorType{}));
  }
  read_nodes(gp, path, base_dir, warn, where + ": ", *raw);
  for (const auto& vi : gp.output()) raw->outputs.push_back(vi.name());
  return raw;
}

void read_nodes(const onnx::GraphProto& gp, const std::string& path, const std::string& base_dir,
                const std::function<void(const std::string&)>& warn, const std::string& scope, detail::RawGraph& raw) {
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& np = gp.node(i);
    detail::RawNode n;
    n.name = np.name();
    n.op = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.place = scope + "node[" + std::to_string(i) + "]";
    const std::string node_name = np.name().empty() ? n.op + "_" + std::to_string(i) : np.name();
    const std::string where = path + ": node '" + node_name + "'";
    for (const auto& a : np.attribute()) {
      n.attrs[a.name()] = attribute_from_onnx(a, where);
      if (a.type() == onnx::AttributeProto::GRAPH)
        n.subgraphs.emplace_back(a.name(), body_from_onnx(a.g(), path, base_dir, warn,
                                                          scope + "node '" + node_name + "' " + a.name(), raw.opset));
    }
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    // Omitted optional outputs: trailing ones are dropped, inner ones get a private name.
    while (!n.outputs.empty() && n.outputs.back().empty()) n.outputs.pop_back();
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k].empty()) n.outputs[k] = "__unused_" + std::to_string(raw.nodes.size()) + "_" + std::to_string(k) +
                                               (scope.empty() ? "" : "_" + std::to_string(std::hash<std::string>{}(scope)));
    raw.nodes.push_back(std::move(n));
  }
}

Graph import_once(const std::string& path, const ImportOptions& options, const std::function<void(const std::string&)>& warn,
                  std::vector<DefaultedInput>& defaulted) {
  onnx::ModelProto m = read_model(path);
  const onnx::GraphProto& gp = m.graph();
  detail::RawGraph raw;
  raw.name = gp.name();
  raw.opset = default_opset(m, path);
  const std::string base_dir = std::filesystem::path(path).parent_path().string();

  std::set<std::string> initializer_names;
  for (int i = 0; i < gp.initializer_size(); ++i) {
    const auto& t = gp.initializer(i);
    initializer_names.insert(t.name());
    raw.constants.emplace_back(t.name(), tensor_from_onnx(t, path + ": initializer '" + t.name() + "'", base_dir, warn));
  }
  for (const auto& vi : gp.input())
    if (!initializer_names.count(vi.name())) raw.inputs.emplace_back(vi.name(), input_type(vi, options, path, warn, defaulted));
  for (const auto& [name, _] : options.input_shapes) {
    bool found = false;
    for (const auto& [in, t] : raw.inputs) found |= in == name;
    if (!found) throw UserError::mentioning(path, "", mention("input_shapes") + ": the model has no input named '" + name + "'");
  }

  read_nodes(gp, path, base_dir, warn, "", raw);
  for (const auto& vi : gp.output()) raw.outputs.push_back(vi.name());
  return detail::build_graph(std::move(raw), path);
}


// The input_shapes binding with every symbolic dimension of `inputs` set to `size` (the first
// dimension, the batch by convention, to 1), added to the user's own bindings.
std::map<std::string, Shape> bind_symbolic(const std::vector<DefaultedInput>& inputs, const ImportOptions& options, int64_t size) {
  std::map<std::string, Shape> shapes = options.input_shapes;
  for (const DefaultedInput& in : inputs) {
    Shape s;
    for (size_t d = 0; d < in.dims.size(); ++d) s.push_back(!in.symbolic[d] ? std::stoll(in.dims[d]) : d == 0 ? 1 : size);
    shapes[in.name] = s;
  }
  return shapes;
}

// "input 'x' has symbolic dimensions [?, 3, h, w], bound to 1; give them, e.g. input_shapes x=1x3x224x224"
// (a mention, which each front end spells its own way): the example is the first of a few common
// sizes with which the model imports.
ErrorText symbolic_hint(const std::string& path, const ImportOptions& options, const std::vector<DefaultedInput>& inputs) {
  std::string which;
  OptionMention example{"input_shapes", {}};
  for (const DefaultedInput& in : inputs) {
    std::string dims;
    for (const std::string& d : in.dims) dims += (dims.empty() ? "" : ", ") + d;
    which += (which.empty() ? "input '" : ", input '") + in.name + "' has symbolic dimensions [" + dims + "]";
  }
  for (int64_t size : {224, 64, 128, 320, 640, 32}) {
    ImportOptions trial = options;
    trial.input_shapes = bind_symbolic(inputs, options, size);
    trial.warn = [](const std::string&) {};
    std::vector<DefaultedInput> none;
    try {
      import_once(path, trial, trial.warn, none);
    } catch (const UserError&) {
      continue;
    }
    for (const auto& [name, shape] : trial.input_shapes)
      for (const DefaultedInput& in : inputs)
        if (in.name == name) example.bindings.emplace_back(name, shape);
    break;
  }
  if (example.bindings.empty()) {
    // No common size imports: the form, with the fixed dimensions in place (accepted syntax, so
    // it can be edited rather than rewritten).
    for (const DefaultedInput& in : inputs)
      example.bindings.emplace_back(in.name, bind_symbolic({in}, ImportOptions{}, 224).at(in.name));
    return which + ", bound to 1 here; give every one of them the size the model needs, in the form " + ErrorText(example);
  }
  return which + ", bound to 1 here; give them sizes, e.g. " + ErrorText(example);
}

}  // namespace

// Symbolic dimensions nobody bound are 1; when the model cannot be imported that way (a window
// larger than its input, shapes that no longer agree), the error says which input dimensions were
// symbolic and gives an input_shapes binding with which the model does import.
Graph import_onnx(const std::string& path, const ImportOptions& options) {
  auto warn = options.warn ? options.warn : [](const std::string& w) { std::fprintf(stderr, "warning: %s\n", printable(w).c_str()); };
  std::vector<DefaultedInput> defaulted;
  // Warnings wait for the outcome: a failed import prints one line, the error, which says it all.
  std::vector<std::string> warnings;
  try {
    Graph g = import_once(path, options, [&](const std::string& w) { warnings.push_back(w); }, defaulted);
    for (const std::string& w : warnings) warn(w);
    if (options.symbolic) *options.symbolic = defaulted;
    if (options.simplify) {
      SimplifyReport report = simplify_graph(g);
      if (options.simplified) *options.simplified = std::move(report);
    }
    return g;
  } catch (const UserError& e) {
    if (defaulted.empty()) throw;
    throw UserError::with_text(e.text() + " (" + symbolic_hint(path, options, defaulted) + ")");
  }
}

}  // namespace tessera
