#include "tessera/graph.h"

#include <algorithm>
#include <set>

#include "tessera/error.h"

namespace tessera {

bool Value::is_weight() const {
  return kind == ValueKind::Constant && is_float(type.dtype) && type.numel() > 1 && !shapes_computation;
}

ValueId Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return static_cast<ValueId>(values.size() - 1);
}

NodeId Graph::add_node(Node n) {
  auto id = static_cast<NodeId>(nodes.size());
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    Value& v = value(n.outputs[i]);
    v.kind = ValueKind::Intermediate;
    v.producer = id;
    v.producer_output = static_cast<int>(i);
  }
  nodes.push_back(std::move(n));
  return id;
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
  std::vector<std::vector<NodeId>> out(values.size());
  for (NodeId n = 0; n < num_nodes(); ++n)
    for (ValueId v : node(n).inputs)
      if (v != kNoValue && (out[v].empty() || out[v].back() != n)) out[v].push_back(n);
  return out;
}

bool Graph::is_output(ValueId v) const { return std::find(outputs.begin(), outputs.end(), v) != outputs.end(); }

ValueId Graph::find_value(const std::string& n) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == n) return static_cast<ValueId>(i);
  return kNoValue;
}

NodeId Graph::find_node(const std::string& n) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == n) return static_cast<NodeId>(i);
  return kNoNode;
}

namespace {

// Weights of `g` and of its nodes' sub-graphs (If branches), each name once: a branch holds
// copies of the outer constants it reads (attribute.h), under the same names.
void count_weights(const Graph& g, std::set<std::string>& seen, int64_t& n) {
  for (const Value& v : g.values)
    if (v.is_weight() && seen.insert(v.name).second) n += v.type.numel();
  for (const Node& node : g.nodes)
    for (const auto& [_, a] : node.attrs)
      if (const auto* sub = std::get_if<GraphAttr>(&a); sub && sub->graph) count_weights(*sub->graph, seen, n);
}

}  // namespace

int64_t Graph::parameter_count() const {
  std::set<std::string> seen;
  int64_t n = 0;
  count_weights(*this, seen, n);
  return n;
}

namespace {

bool same_data(const TensorData& a, const TensorData& b) {
  if (!a || !b) return !a && !b;
  return a == b || *a == *b;
}

bool same_value(const Value& a, const Value& b) {
  return a.name == b.name && a.type == b.type && a.kind == b.kind && a.producer == b.producer &&
         a.producer_output == b.producer_output && a.shapes_computation == b.shapes_computation &&
         a.plain_only == b.plain_only && a.range == b.range && a.int8_bias_shift == b.int8_bias_shift &&
         same_data(a.data, b.data);
}

bool same_node(const Node& a, const Node& b) {
  return a.name == b.name && a.op == b.op && a.domain == b.domain && a.attrs == b.attrs &&
         a.inputs == b.inputs && a.outputs == b.outputs;
}

}  // namespace

bool Graph::operator==(const Graph& o) const {
  return name == o.name && opset == o.opset && inputs == o.inputs && outputs == o.outputs &&
         std::equal(values.begin(), values.end(), o.values.begin(), o.values.end(), same_value) &&
         std::equal(nodes.begin(), nodes.end(), o.nodes.begin(), o.nodes.end(), same_node);
}

}  // namespace tessera
