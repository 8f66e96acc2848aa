// SubGraph: a candidate partition's node set plus everything that derives from it (docs/design.md).
//
// Terms, for an inside set S over a DataflowIndex:
//   entries  inside nodes that read a non-constant value from outside S (a graph input or an
//            output of a node outside S); constants do not make a node an entry
//   exits    inside nodes with an output read outside S or that is a graph output
//   inputs   non-constant values read by S and produced outside it, in first-use order (inside
//            nodes ascending, then each node's input position); the function's arguments
//   outputs  values produced inside and read outside or that are graph outputs, ascending by
//            (producer index, output position)
//   depth    1 for a node with no producer inside, else 1 + max depth of its inside producers;
//            the SubGraph's depth is the max over its nodes (a chain of k nodes has depth k)
//   kind     max op kind inside (tessera::op_kind), E < B < I < R < A < O
//   label    the op types in index order joined with '+': "Conv+Add+Relu"
//   taps     exits that also feed a node inside
//   convex   no path leaves S and comes back: (down(S) & up(S)) is within S
//
//   x ─▶ [Conv ─▶ Add] ─▶ Relu          S = {Conv, Add}: entries {Conv}, exits {Add},
//                   └──────▶ out            depth 2, kind A, label "Conv+Add"
//
// Validity of a candidate = weakly connected + convex + its backend's limits (SubGraphConfig);
// check() answers with the reason it fails, never a bare bool, so rules can count rejections by
// reason ("3 exits, max 1", "not convex", "depth 5, max 4"). Support of ops is the rule's concern.
//
// A SubGraph is a value over a frozen index: it holds a pointer to its DataflowIndex (which must
// outlive it) and computes the derived sets once, in its constructor, in O(|S| * degree).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "partition/dataflow_index.h"
#include "tessera/graph.h"
#include "tessera/index_set.h"
#include "ir/op_registry.h"

namespace tessera {

// A backend's limits on one candidate; 0 = no limit (docs/design.md defaults: 0, 1, false).
struct SubGraphConfig {
  int max_depth = 0;
  int max_exits = 1;
  bool allow_taps = false;
};

class SubGraph {
 public:
  SubGraph() = default;                                  // empty, no index; only for containers
  SubGraph(const DataflowIndex& index, IndexSet inside);

  const DataflowIndex& index() const { return *index_; }
  const IndexSet& inside() const { return inside_; }
  const IndexSet& entries() const { return entries_; }
  const IndexSet& exits() const { return exits_; }
  const IndexSet& taps() const { return taps_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  int depth() const { return depth_; }
  OpKind kind() const { return kind_; }
  std::string label() const;
  std::vector<NodeId> nodes() const { return inside_.members(); }
  int size() const { return inside_.count(); }
  bool empty() const { return inside_.empty(); }

  bool is_convex() const;
  bool is_weakly_connected() const;
  // nullopt when valid; otherwise the first failing reason in this order: "empty",
  // "not weakly connected", "not convex", "depth D, max M", "E exits, max M",
  // "T taps, none allowed".
  std::optional<std::string> check(const SubGraphConfig& config) const;

  bool operator==(const SubGraph& o) const { return inside_ == o.inside_; }
  std::strong_ordering operator<=>(const SubGraph& o) const { return inside_ <=> o.inside_; }

 private:
  const DataflowIndex* index_ = nullptr;
  IndexSet inside_, entries_, exits_, taps_;
  std::vector<ValueId> inputs_, outputs_;
  int depth_ = 0;
  OpKind kind_ = OpKind::Elementwise;
};

// Two sub-graphs touch (docs/design.md) when they are disjoint, an output of one feeds an entry of the
// other (some node of one directly consumes a node of the other), and their union is convex.
bool touches(const SubGraph& a, const SubGraph& b);
// The union of two disjoint sub-graphs of the same index (an internal invariant).
SubGraph disjoint_union(const SubGraph& a, const SubGraph& b);

// Extraction: the sub-graph as a standalone function Graph, the unit a cost model costs and
// emit outlines. Function inputs (Graph::inputs) are the values function_arguments() lists, in
// first-use order over the inside nodes ascending and each node's input position: the
// SubGraph's inputs interleaved with the weight constants (Value::is_weight) read inside, which
// become inputs (parameters, type only, no data). Other constants are copied in as constants.
// Function outputs: SubGraph::outputs(), ascending index. Node names, value names, attributes and
// the opset are kept; the Graph's name is the SubGraph's label. tessera::structural_hash applies
// (a weight counts by type), so partitions differing only in weight values share one identity.
//
//   S = {Conv, Relu} over  x ─▶ Conv(x, W, B) ─▶ Relu ─▶ y
//   fn(x, W, B) { Conv(x, W, B) ─▶ Relu } -> y      (W, B weights: parameters)
Graph extract_function(const Graph& graph, const SubGraph& sub_graph);
// The outer values bound to the extracted function's inputs, in the same order.
std::vector<ValueId> function_arguments(const Graph& graph, const SubGraph& sub_graph);

}  // namespace tessera
