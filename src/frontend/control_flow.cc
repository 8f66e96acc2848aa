#include "frontend/control_flow.h"

#include <algorithm>
#include <set>

#include "tessera/error.h"
#include "support/text.h"

namespace tessera::detail {

std::vector<std::string> free_names(const RawGraph& g) {
  std::set<std::string> defined, seen;
  for (const auto& [name, _] : g.inputs) defined.insert(name);
  for (const auto& [name, _] : g.constants) defined.insert(name);
  for (const RawNode& n : g.nodes)
    for (const std::string& o : n.outputs) defined.insert(o);
  std::vector<std::string> out;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) out.push_back(name);
  };
  for (const RawNode& n : g.nodes) {
    for (const std::string& in : n.inputs) use(in);
    for (const auto& [_, sub] : n.subgraphs)
      for (const std::string& name : free_names(*sub)) use(name);
  }
  for (const std::string& o : g.outputs) use(o);
  return out;
}

void add_captures(std::vector<RawNode>& nodes) {
  for (RawNode& n : nodes) {
    n.formal_inputs = n.inputs.size();
    if (n.subgraphs.empty()) continue;
    // By attribute name, so that the order does not depend on the file's attribute order.
    std::sort(n.subgraphs.begin(), n.subgraphs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::set<std::string> have;
    for (const auto& [_, sub] : n.subgraphs)
      for (const std::string& name : free_names(*sub))
        if (have.insert(name).second) n.inputs.push_back(name);
  }
}

const RawGraph* raw_subgraph(const RawNode& raw, const std::string& name) {
  for (const auto& [attr, g] : raw.subgraphs)
    if (attr == name) return g.get();
  return nullptr;
}

void type_outputs(Graph& g, const Node& n, const std::vector<TensorType>& types, std::vector<char>& known,
                  const std::string& file, const std::string& place) {
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    Value& out = g.value(n.outputs[k]);
    if (known[n.outputs[k]] && !(out.type == types[k]))
      throw UserError(file, place, "output '" + out.name + "' is declared " + to_string(out.type) + " but the body gives " +
                                       to_string(types[k]));
    out.type = types[k];
    known[n.outputs[k]] = 1;
  }
}

Captures split_captures(const Graph& g, const Node& n, size_t first) {
  Captures c;
  for (size_t i = first; i < n.inputs.size(); ++i) {
    const Value& v = g.value(n.inputs[i]);
    if (v.is_constant() && v.data) {
      c.constants.emplace_back(v.name, Tensor{v.type, v.data});
    } else {
      c.inputs.emplace_back(v.name, v.type);
      c.values.push_back(n.inputs[i]);
    }
  }
  return c;
}

std::shared_ptr<const Graph> build_body(const RawGraph& b, const std::vector<TensorType>& formal, const Captures& c,
                                        int opset, const std::string& file) {
  RawGraph body = b;
  body.opset = opset;
  for (size_t i = 0; i < formal.size() && i < body.inputs.size(); ++i) body.inputs[i].second = formal[i];
  body.untyped_inputs.clear();
  body.inputs.insert(body.inputs.end(), c.inputs.begin(), c.inputs.end());
  const std::vector<std::string> reads = free_names(b);
  const std::set<std::string> used(reads.begin(), reads.end());
  for (const auto& k : c.constants)
    if (used.count(k.first)) body.constants.push_back(k);
  return std::make_shared<const Graph>(build_graph(std::move(body), file));
}

void close_if(Graph& g, NodeId id, const RawNode& raw, std::vector<char>& known, const std::string& file) {
  const std::string place = "node '" + raw.name + "' (If)";
  const RawGraph* then_raw = raw_subgraph(raw, "then_branch");
  const RawGraph* else_raw = raw_subgraph(raw, "else_branch");
  if (!then_raw && !else_raw) throw UserError(file, place, "has neither then_branch nor else_branch graph");
  Node& n = g.nodes[static_cast<size_t>(id)];
  if (n.inputs.empty() || n.inputs[0] == kNoValue) throw UserError(file, place, "has no condition input");
  // Declared branch inputs (JSON) match the node's next inputs; the rest are captures.
  const size_t declared = (then_raw ? then_raw : else_raw)->inputs.size();
  if ((then_raw && then_raw->inputs.size() != declared) || (else_raw && else_raw->inputs.size() != declared) ||
      n.inputs.size() < 1 + declared)
    throw UserError(file, place, "its branches declare other inputs than the " + std::to_string(n.inputs.size() - 1) +
                                     " node inputs after the condition");
  std::vector<ValueId> kept(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(1 + declared));
  const Captures captures = split_captures(g, n, 1 + declared);
  kept.insert(kept.end(), captures.values.begin(), captures.values.end());
  std::vector<TensorType> formal;
  for (size_t i = 0; i < declared; ++i) formal.push_back(g.value(n.inputs[1 + i]).type);
  auto build = [&](const RawGraph& b) { return build_body(b, formal, captures, g.opset, file); };
  // A branch that does not type at these input shapes (silero VAD's 8 kHz branch wants 256
  // samples, its 16 kHz one 512) is left out; choosing it at run time is an error that says why.
  struct Built {
    std::shared_ptr<const Graph> graph;
    ErrorText why;   // when graph is null
  };
  auto try_build = [&](const RawGraph* b, const char* name) {
    if (!b) return Built{nullptr, attr_string(n.attrs, name, std::string(name) + " has no graph")};
    try {
      return Built{build(*b), ""};
    } catch (const UserError& e) {
      return Built{nullptr, std::string(name) + " does not type with these input shapes: " + e.text()};
    }
  };
  Built then_b = try_build(then_raw, "then_branch"), else_b = try_build(else_raw, "else_branch");
  if (!then_b.graph && !else_b.graph) throw UserError::mentioning(file, place, then_b.why + "; " + else_b.why);
  for (const Built* b : {&then_b, &else_b})
    if (b->graph && b->graph->outputs.size() != n.outputs.size())
      throw UserError(file, place, "a branch has " + std::to_string(b->graph->outputs.size()) + " outputs, the node " +
                                       std::to_string(n.outputs.size()));
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Graph& first = then_b.graph ? *then_b.graph : *else_b.graph;
    const TensorType& a = first.value(first.outputs[k]).type;
    if (then_b.graph && else_b.graph) {
      const TensorType& b = else_b.graph->value(else_b.graph->outputs[k]).type;
      if (!(a == b))
        throw UserError(file, place, "output " + std::to_string(k) + " is " + to_string(a) + " in then_branch but " +
                                         to_string(b) + " in else_branch; tessera needs one static type");
    }
    Value& out = g.value(n.outputs[k]);
    if (known[n.outputs[k]] && !(out.type == a))
      throw UserError(file, place, "output '" + out.name + "' is declared " + to_string(out.type) + " but the branches give " +
                                       to_string(a));
    out.type = a;
    known[n.outputs[k]] = 1;
  }
  n.inputs = std::move(kept);
  // A missing branch stays a string attribute with the reason (the JSON form keeps it too).
  n.attrs["then_branch"] = then_b.graph ? Attribute{GraphAttr{then_b.graph}} : Attribute{printable(then_b.why.render(library_spelling))};
  n.attrs["else_branch"] = else_b.graph ? Attribute{GraphAttr{else_b.graph}} : Attribute{printable(else_b.why.render(library_spelling))};
}

}  // namespace tessera::detail
