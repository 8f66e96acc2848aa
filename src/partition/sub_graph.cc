// SubGraph: derived sets, convexity, connectivity, validity reasons, touching and union.
#include "partition/sub_graph.h"

#include <algorithm>
#include <unordered_map>

#include "tessera/error.h"

namespace tessera {

SubGraph::SubGraph(const DataflowIndex& index, IndexSet inside)
    : index_(&index), inside_(std::move(inside)) {
  TESSERA_CHECK(inside_.size() == index.size(), "SubGraph: inside set over another graph");
  const Graph& g = index.graph();
  const int n = index.size();
  entries_ = IndexSet(n);
  exits_ = IndexSet(n);
  taps_ = IndexSet(n);
  const auto& value_consumers = index.value_consumers();
  std::unordered_map<NodeId, int> depth;
  depth.reserve(static_cast<size_t>(inside_.count()) * 2);

  inside_.for_each([&](NodeId i) {
    const Node& node = g.node(i);
    kind_ = std::max(kind_, index.kind(i));
    for (ValueId v : node.inputs) {
      if (v == kNoValue) continue;
      const Value& value = g.value(v);
      if (value.is_constant()) continue;
      if (value.producer != kNoNode && inside_.contains(value.producer)) continue;
      entries_.insert(i);
      if (std::find(inputs_.begin(), inputs_.end(), v) == inputs_.end()) inputs_.push_back(v);
    }
    int d = 1;
    for (NodeId p : index.producers(i))
      if (inside_.contains(p)) d = std::max(d, depth[p] + 1);
    depth[i] = d;
    depth_ = std::max(depth_, d);

    bool feeds_inside = false;
    bool is_exit = false;
    for (ValueId v : node.outputs) {
      bool out = g.is_output(v);
      for (NodeId c : value_consumers[static_cast<size_t>(v)]) {
        if (inside_.contains(c))
          feeds_inside = true;
        else
          out = true;
      }
      if (out) outputs_.push_back(v);
      is_exit = is_exit || out;
    }
    if (is_exit) exits_.insert(i);
    if (is_exit && feeds_inside) taps_.insert(i);
  });
}

std::string SubGraph::label() const {
  std::string out;
  inside_.for_each([&](NodeId i) {
    if (!out.empty()) out += "+";
    out += index_->graph().node(i).op;
  });
  return out;
}

bool SubGraph::is_convex() const {
  const int n = index_->size();
  IndexSet down(n), up(n);
  inside_.for_each([&](NodeId i) {
    down |= index_->downstream(i);
    up |= index_->upstream(i);
  });
  return inside_.and3_within(down, up, down);
}

bool SubGraph::is_weakly_connected() const {
  int start = inside_.first();
  if (start < 0) return false;
  IndexSet seen(index_->size());
  std::vector<NodeId> stack{start};
  seen.insert(start);
  while (!stack.empty()) {
    NodeId i = stack.back();
    stack.pop_back();
    auto visit = [&](NodeId j) {
      if (inside_.contains(j) && !seen.contains(j)) {
        seen.insert(j);
        stack.push_back(j);
      }
    };
    for (NodeId p : index_->producers(i)) visit(p);
    for (NodeId c : index_->consumers(i)) visit(c);
  }
  return seen == inside_;
}

std::optional<std::string> SubGraph::check(const SubGraphConfig& config) const {
  if (empty()) return "empty";
  if (!is_weakly_connected()) return "not weakly connected";
  if (!is_convex()) return "not convex";
  if (config.max_depth > 0 && depth_ > config.max_depth)
    return "depth " + std::to_string(depth_) + ", max " + std::to_string(config.max_depth);
  int exits = exits_.count();
  if (config.max_exits > 0 && exits > config.max_exits)
    return std::to_string(exits) + (exits == 1 ? " exit" : " exits") + ", max " +
           std::to_string(config.max_exits);
  int taps = taps_.count();
  if (!config.allow_taps && taps > 0)
    return std::to_string(taps) + (taps == 1 ? " tap" : " taps") + ", none allowed";
  return std::nullopt;
}

namespace {

// Some node of `from` directly feeds a node of `to`.
bool feeds(const DataflowIndex& index, const IndexSet& from, const IndexSet& to) {
  bool found = false;
  from.for_each([&](NodeId i) {
    if (!found && index.consumer_set(i).intersects(to)) found = true;
  });
  return found;
}

}  // namespace

bool touches(const SubGraph& a, const SubGraph& b) {
  const DataflowIndex& index = a.index();
  if (!a.inside().disjoint(b.inside())) return false;
  if (!feeds(index, a.inside(), b.inside()) && !feeds(index, b.inside(), a.inside())) return false;
  return SubGraph(index, a.inside() | b.inside()).is_convex();
}

SubGraph disjoint_union(const SubGraph& a, const SubGraph& b) {
  TESSERA_CHECK(&a.index() == &b.index(), "disjoint_union: sub-graphs of different indexes");
  TESSERA_CHECK(a.inside().disjoint(b.inside()), "disjoint_union: sub-graphs overlap");
  return SubGraph(a.index(), a.inside() | b.inside());
}

}  // namespace tessera
