#include "frontend/graph_builder.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "backends/ref/ref_kernels.h"
#include "frontend/constant_folding.h"
#include "frontend/control_flow.h"
#include "frontend/if_inlining.h"
#include "frontend/quant_check.h"
#include "frontend/shape_inference.h"
#include "frontend/window_check.h"
#include "ir/boundary_layout.h"
#include "tessera/error.h"
#include "ir/op_registry.h"
#include "support/text.h"
#include "ir/limits.h"

namespace tessera::detail {
namespace {

// Resource limits (limits.h): a graph of more nodes, or a tensor of more elements, is refused with
// a clear message instead of being allocated.
void check_size(const TensorType& t, const std::string& file, const std::string& place) {
  if (std::string why = size_limit_problem(t); !why.empty()) throw UserError(file, place, why);
}

// Every name and string goes into JSON sooner or later (plans, `print --json`), and JSON holds
// only UTF-8; ONNX files are not checked by protobuf, so this is where a bad byte is caught.
void check_utf8(const std::string& text, const std::string& file, const std::string& place) {
  if (!is_valid_utf8(text)) throw UserError(file, place, "'" + text + "' is not valid UTF-8");
}

void check_strings(const RawGraph& raw, const std::string& file) {
  check_utf8(raw.name, file, "graph name");
  for (const auto& [name, _] : raw.inputs) check_utf8(name, file, "graph input");
  for (const auto& [name, _] : raw.constants) check_utf8(name, file, "constant");
  for (const std::string& name : raw.outputs) check_utf8(name, file, "graph output");
  for (const RawNode& n : raw.nodes) {
    const std::string place = n.place.empty() ? "node" : n.place;
    for (const std::string* s : {&n.name, &n.op, &n.domain}) check_utf8(*s, file, place);
    for (const auto* list : {&n.inputs, &n.outputs})
      for (const std::string& s : *list) check_utf8(s, file, place);
    for (const auto& [key, a] : n.attrs) {
      check_utf8(key, file, place + ": attribute");
      if (auto s = std::get_if<std::string>(&a)) check_utf8(*s, file, place + ": attribute '" + key + "'");
      if (auto v = std::get_if<std::vector<std::string>>(&a))
        for (const std::string& s : *v) check_utf8(s, file, place + ": attribute '" + key + "'");
    }
  }
}

// A Constant's attribute as the type its name says; another type (value_float: 3) is the file's error.
template <class T>
const T& constant_attr(const RawNode& n, const std::string& name, const Attribute& a, const std::string& file) {
  if (auto v = std::get_if<T>(&a)) return *v;
  throw UserError(file, "node '" + n.name + "'", "Constant's attribute '" + name + "' has the wrong type");
}

// A Constant node's value as a Tensor, or nullopt if it holds something tessera does not model.
std::optional<Tensor> constant_value(const RawNode& n, const std::string& file) {
  auto scalar = [](DType t, const void* p, size_t size, Shape shape) {
    auto bytes = std::make_shared<TensorBytes>(static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + size);
    return Tensor{TensorType{t, std::move(shape)}, bytes};
  };
  for (const auto& [name, a] : n.attrs) {
    if (name == "value") {
      if (auto t = std::get_if<Tensor>(&a)) return *t;
    } else if (name == "value_float") {
      float f = static_cast<float>(constant_attr<double>(n, name, a, file));
      return scalar(DType::f32, &f, 4, {});
    } else if (name == "value_int") {
      int64_t i = constant_attr<int64_t>(n, name, a, file);
      return scalar(DType::i64, &i, 8, {});
    } else if (name == "value_floats") {
      const auto& d = constant_attr<std::vector<double>>(n, name, a, file);
      std::vector<float> f(d.begin(), d.end());
      return scalar(DType::f32, f.data(), f.size() * 4, {static_cast<int64_t>(f.size())});
    } else if (name == "value_ints") {
      const auto& v = constant_attr<std::vector<int64_t>>(n, name, a, file);
      return scalar(DType::i64, v.data(), v.size() * 8, {static_cast<int64_t>(v.size())});
    }
  }
  throw UserError(file, "node '" + n.name + "'", "Constant node has no value attribute tessera can read");
}

void name_nodes(std::vector<RawNode>& nodes) {
  std::set<std::string> used;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name.empty()) nodes[i].name = nodes[i].op + "_" + std::to_string(i);
  for (auto& n : nodes) {
    std::string name = n.name;
    for (int k = 1; used.count(name); ++k) name = n.name + "_" + std::to_string(k);
    n.name = name;
    used.insert(name);
  }
}

// Kahn's algorithm; among ready nodes the one earliest in the file goes first.
std::vector<size_t> topological_order(const std::vector<RawNode>& nodes, const std::set<std::string>& defined,
                                      const std::string& file) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& out : nodes[i].outputs) producer.emplace(out, i);
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t k = 0; k < nodes[i].inputs.size(); ++k) {
      const std::string& in = nodes[i].inputs[k];
      if (in.empty() || defined.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        throw UserError(file, "node '" + nodes[i].name + "'", "input " + std::to_string(k) + " '" + in + "' is not defined");
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] > 0) throw UserError(file, "node '" + nodes[i].name + "'", "the graph has a cycle through this node");
  }
  return order;
}

// Constants read as shaping operands (Resize scales, Clip bounds, ...) count by value.
void mark_shaping_constants(Graph& g) {
  for (const Node& n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (n.inputs[i] != kNoValue && g.value(n.inputs[i]).is_constant() && is_value_input(n.op, i))
        g.value(n.inputs[i]).shapes_computation = true;
}

// Removes folded nodes (their outputs are constants now) and renumbers the rest. Values are
// renumbered too: a graph's JSON form lists every constant before the first node's outputs, so
// its re-import numbers a folded constant before the outputs of the nodes that remain, and
// graph_from_json(graph_to_json(g)) == g (json_graph.h) needs the same order here. Before:
// x, w, c = Conv(x, w), y = Size(c) folded; after: x, w, y, c (a fuzz_onnx finding).
Graph drop_folded_nodes(Graph g, const std::vector<char>& folded) {
  if (std::find(folded.begin(), folded.end(), 1) == folded.end()) return g;
  // Rank of each value: 0 inputs and constants of the file, 1 folded outputs, 2 node outputs.
  std::vector<int> rank(g.values.size(), 0);
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes.size()); ++id)
    for (ValueId v : g.nodes[id].outputs) rank[v] = folded[id] ? 1 : 2;
  std::vector<ValueId> order(g.values.size());   // new id -> old id
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<ValueId>(i);
  std::stable_sort(order.begin(), order.end(), [&](ValueId a, ValueId b) { return rank[a] < rank[b]; });
  std::vector<ValueId> new_id(g.values.size());
  for (size_t i = 0; i < order.size(); ++i) new_id[order[i]] = static_cast<ValueId>(i);
  auto renumber = [&](std::vector<ValueId>& ids) {
    for (ValueId& v : ids)
      if (v != kNoValue) v = new_id[v];
  };

  Graph out;
  out.name = g.name;
  out.source = g.source;
  out.opset = g.opset;
  for (ValueId old : order) out.values.push_back(std::move(g.values[old]));
  out.inputs = std::move(g.inputs);
  out.outputs = std::move(g.outputs);
  renumber(out.inputs);
  renumber(out.outputs);
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes.size()); ++id) {
    if (folded[id]) continue;
    renumber(g.nodes[id].inputs);
    renumber(g.nodes[id].outputs);
    out.add_node(std::move(g.nodes[id]));
  }
  return out;
}

// An If whose condition import has folded to a constant: the first output names it in the RawGraph.
struct FoldableIf {
  std::string first_output;
  bool cond = false;
};

std::optional<FoldableIf> foldable_if(const Graph& g, const std::vector<char>& folded) {
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (folded[id] || n.op != "If" || !n.domain.empty() || n.inputs.empty() || n.inputs[0] == kNoValue || n.outputs.empty())
      continue;
    const Value& c = g.value(n.inputs[0]);
    if (!c.is_constant() || !c.data || c.type.numel() != 1) continue;
    bool any = false;
    for (uint8_t b : *c.data) any |= b != 0;
    return FoldableIf{g.value(n.outputs[0]).name, any};
  }
  return std::nullopt;
}

// Control flow left after typing: an If, Loop or Scan whose inputs never got types.
void reject_control_flow(const Graph& g, const std::vector<char>& known, const std::vector<char>& folded,
                         const std::vector<char>& closed, const std::string& file) {
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (folded[id] || closed[id] || !n.domain.empty()) continue;
    if (n.op == "If" || n.op == "Loop" || n.op == "Scan") {
      std::string unknown;
      for (ValueId v : n.inputs)
        if (v != kNoValue && !known[v]) unknown += (unknown.empty() ? "'" : ", '") + g.value(v).name + "'";
      throw UserError(file, "node '" + n.name + "' (" + n.op + ")", "cannot type what it reads: " + unknown);
    }
  }
}

// One build; nullopt with `inline_next` set when an If must be inlined first.
std::optional<Graph> build_once(RawGraph raw, const std::string& file, std::optional<FoldableIf>& inline_next);

}  // namespace

Graph build_graph(RawGraph raw, const std::string& file) {
  for (;;) {
    std::optional<FoldableIf> next;
    std::optional<Graph> g = build_once(raw, file, next);
    if (g) return std::move(*g);
    raw = inline_if(raw, next->first_output, next->cond, file);
  }
}

namespace {

std::optional<Graph> build_once(RawGraph raw, const std::string& file, std::optional<FoldableIf>& inline_next) {
  // 0. Resource limits, before anything is sized by what the file claims.
  if (raw.nodes.size() > kMaxGraphNodes)
    throw UserError(file, "", std::to_string(raw.nodes.size()) + " nodes, more than tessera's limit of " +
                                  std::to_string(kMaxGraphNodes));
  for (const auto& [name, type] : raw.inputs) check_size(type, file, "graph input '" + name + "'");
  for (const auto& [name, t] : raw.constants) check_size(t.type, file, "constant '" + name + "'");
  check_strings(raw, file);

  // 1. Constant nodes become constants.
  std::vector<RawNode> nodes;
  name_nodes(raw.nodes);
  for (auto& n : raw.nodes) {
    if (n.op == "Constant" && n.domain.empty() && n.outputs.size() == 1) {
      raw.constants.emplace_back(n.outputs[0], *constant_value(n, file));
    } else {
      nodes.push_back(std::move(n));
    }
  }

  Graph g;
  g.name = raw.name;
  g.source = file;
  g.opset = raw.opset;
  std::unordered_map<std::string, ValueId> ids;
  std::unordered_map<std::string, std::string> defined_by;
  auto define = [&](const std::string& name, Value v, const std::string& by) {
    if (name.empty()) throw UserError(file, by, "a value has an empty name");
    auto [it, fresh] = defined_by.emplace(name, by);
    if (!fresh) throw UserError(file, by, "duplicate output name '" + name + "' (already defined by " + it->second + ")");
    v.name = name;
    ValueId id = g.add_value(std::move(v));
    ids[name] = id;
    return id;
  };
  std::vector<char> known;
  for (auto& [name, type] : raw.inputs) {
    g.inputs.push_back(define(name, Value{.type = type, .kind = ValueKind::Input}, "graph input '" + name + "'"));
    known.push_back(1);
  }
  for (auto& [name, t] : raw.constants) {
    define(name, Value{.type = t.type, .kind = ValueKind::Constant, .data = t.data}, "constant '" + name + "'");
    known.push_back(1);
  }

  // 2-4. Order nodes, then add them with their outputs.
  std::set<std::string> outside;
  for (const auto& [name, _] : ids) outside.insert(name);
  add_captures(nodes);
  std::vector<size_t> raw_index;   // per NodeId: its RawNode in `nodes`
  for (size_t i : topological_order(nodes, outside, file)) {
    raw_index.push_back(i);
    RawNode& rn = nodes[i];
    Node n{rn.name, rn.op, rn.domain, std::move(rn.attrs), {}, {}};
    for (size_t k = 0; k < rn.outputs.size(); ++k) {
      const auto& decl = k < rn.output_types.size() ? rn.output_types[k] : std::nullopt;
      n.outputs.push_back(define(rn.outputs[k], Value{.type = decl.value_or(TensorType{})}, "node '" + rn.name + "'"));
      known.push_back(decl.has_value());
    }
    for (const auto& in : rn.inputs) n.inputs.push_back(in.empty() ? kNoValue : ids.at(in));
    g.add_node(std::move(n));
  }
  for (size_t k = 0; k < raw.outputs.size(); ++k) {
    auto it = ids.find(raw.outputs[k]);
    if (it == ids.end()) throw UserError(file, "outputs[" + std::to_string(k) + "]", "graph output '" + raw.outputs[k] + "' is not defined");
    g.outputs.push_back(it->second);
  }
  if (g.outputs.empty()) throw UserError(file, "outputs", "the graph has no outputs");

  // 5. Types: ONNX inference and constant folding with ref's kernels (constant_folding.h),
  // alternately, until neither learns more.
  // An If whose condition folds is inlined (start over); the other Ifs and the Loops are closed
  // once the values they read have types, which may type more of the graph.
  std::vector<char> folded(g.nodes.size(), 0), closed(g.nodes.size(), 0);
  const KernelRegistry kernels = make_ref_kernels();
  for (bool progress = true; progress;) {
    do {
      infer_shapes(g, known, folded, file);
    } while (fold_constants(g, known, folded, kernels) > 0);
    if ((inline_next = foldable_if(g, folded))) return std::nullopt;
    progress = false;
    for (NodeId id = 0; id < g.num_nodes(); ++id) {
      const Node& n = g.node(id);
      if (folded[id] || closed[id] || (n.op != "If" && n.op != "Loop" && n.op != "Scan") || !n.domain.empty()) continue;
      bool ready = true;
      for (ValueId v : n.inputs) ready &= v == kNoValue || static_cast<bool>(known[v]);
      if (!ready) continue;
      const RawNode& raw_node = nodes[raw_index[static_cast<size_t>(id)]];
      if (n.op == "If") close_if(g, id, raw_node, known, file);
      else if (n.op == "Loop") close_loop(g, id, raw_node, known, file);
      else close_scan(g, id, raw_node, known, file);
      closed[id] = progress = true;
    }
  }
  reject_control_flow(g, known, folded, closed, file);
  require_known_types(g, known, folded, file);
  for (const Value& v : g.values) check_size(v.type, file, "value '" + v.name + "'");
  // Marked on the nodes that remain: a constant only a folded node read is no shaping operand of
  // this graph, and its JSON form, which has no folded nodes, must re-import equal (json_graph.h).
  Graph built = drop_folded_nodes(std::move(g), folded);
  mark_shaping_constants(built);
  mark_feature_maps(built);
  check_windows(built, file);
  check_quantization(built, file);
  return built;
}

}  // namespace

}  // namespace tessera::detail
