// Dataflow patterns: construction, printing and matching (see src/partition/pattern.h).
#include "partition/pattern.h"

#include <algorithm>

#include "tessera/error.h"

namespace tessera {

PatternPtr Pattern::any() {
  static const PatternPtr p = std::make_shared<const Pattern>();
  return p;
}

PatternPtr Pattern::constant() {
  auto p = std::make_shared<Pattern>();
  p->kind_ = Kind::Constant;
  return p;
}

PatternPtr Pattern::op(std::vector<std::string> ops, std::vector<PatternPtr> args, bool any_args) {
  TESSERA_CHECK(!ops.empty(), "Pattern::op: no op alternatives");
  TESSERA_CHECK(!any_args || args.empty(), "Pattern::op: any_args with explicit args");
  auto p = std::make_shared<Pattern>();
  p->kind_ = Kind::Op;
  p->ops_ = std::move(ops);
  p->args_ = std::move(args);
  p->any_args_ = any_args;
  return p;
}

PatternPtr Pattern::where(std::string debug_name, NodePredicate predicate) const {
  TESSERA_CHECK(kind_ == Kind::Op, "Pattern::where: only op patterns take predicates");
  auto p = std::make_shared<Pattern>(*this);
  if (p->predicate_) {
    NodePredicate first = p->predicate_, second = std::move(predicate);
    p->predicate_ = [first, second](const Graph& g, const Node& n) { return first(g, n) && second(g, n); };
    p->predicate_name_ += ", " + debug_name;
  } else {
    p->predicate_ = std::move(predicate);
    p->predicate_name_ = std::move(debug_name);
  }
  return p;
}

std::vector<std::string> Pattern::op_names() const {
  std::vector<std::string> out(ops_);
  for (const auto& a : args_) {
    auto inner = a->op_names();
    out.insert(out.end(), inner.begin(), inner.end());
  }
  return out;
}

std::string Pattern::to_string() const {
  if (kind_ == Kind::Any) return "*";
  if (kind_ == Kind::Constant) return "const";
  std::string out;
  for (size_t i = 0; i < ops_.size(); ++i) out += (i ? "|" : "") + ops_[i];
  if (!predicate_name_.empty()) out += "[" + predicate_name_ + "]";
  if (any_args_) return out;
  out += "(";
  for (size_t i = 0; i < args_.size(); ++i) out += (i ? ", " : "") + args_[i]->to_string();
  return out + ")";
}

bool Pattern::accepts_node(const Graph& graph, const Node& node) const {
  if (kind_ != Kind::Op) return false;
  if (std::find(ops_.begin(), ops_.end(), node.op) == ops_.end()) return false;
  return !predicate_ || predicate_(graph, node);
}

namespace {

size_t present_arity(const Node& node) {
  size_t n = node.inputs.size();
  while (n > 0 && node.inputs[n - 1] == kNoValue) --n;
  return n;
}

bool match_node(const Graph& g, const Pattern& p, NodeId id, std::vector<NodeId>& nodes);

bool match_value(const Graph& g, const Pattern& p, ValueId v, std::vector<NodeId>& nodes) {
  switch (p.kind()) {
    case Pattern::Kind::Any:
      return true;
    case Pattern::Kind::Constant:
      return v != kNoValue && g.value(v).is_constant();
    case Pattern::Kind::Op:
      if (v == kNoValue) return false;
      return g.value(v).producer != kNoNode && match_node(g, p, g.value(v).producer, nodes);
  }
  return false;
}

bool match_node(const Graph& g, const Pattern& p, NodeId id, std::vector<NodeId>& nodes) {
  const Node& node = g.node(id);
  if (!p.accepts_node(g, node)) return false;
  if (!p.any_args()) {
    if (present_arity(node) != p.args().size()) return false;
    for (size_t i = 0; i < p.args().size(); ++i)
      if (!match_value(g, *p.args()[i], node.inputs[i], nodes)) return false;
  }
  nodes.push_back(id);
  return true;
}

}  // namespace

std::vector<NodeId> match_at(const Graph& graph, const Pattern& pattern, NodeId root) {
  TESSERA_CHECK(pattern.kind() == Pattern::Kind::Op, "match_at: root pattern must be an op pattern");
  std::vector<NodeId> nodes;
  if (!match_node(graph, pattern, root, nodes)) return {};
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::vector<PatternMatch> match_all(const Graph& graph, const Pattern& pattern) {
  std::vector<PatternMatch> out;
  for (NodeId i = 0; i < graph.num_nodes(); ++i) {
    auto nodes = match_at(graph, pattern, i);
    if (!nodes.empty()) out.push_back({i, std::move(nodes)});
  }
  return out;
}

}  // namespace tessera
