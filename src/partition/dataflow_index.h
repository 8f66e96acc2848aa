// DataflowIndex: the node-level dataflow graph of a frozen Graph, with reachability, built once.
//
// Terms (docs/design.md): the post-order index of a node is its NodeId (Graph::nodes is topological).
// A node's producers are the distinct nodes whose outputs it reads; its consumers the distinct
// nodes that read its outputs. downstream(n) is every node reachable from n along one or more
// edges; upstream(n) every node from which n is reachable. Graph inputs and constants are values,
// not nodes: they are never in any IndexSet.
//
//   x ─▶ Conv(0) ─▶ Add(1) ─▶ Relu(2)        downstream(0) = {1,2}, upstream(2) = {0,1}
//              w ─┘      b ─┘                producers(1) = {0}, consumers(0) = {1}
//
// Why reachability bitsets: convexity of a candidate S is "no node outside S is both reachable
// from S and reaching S", i.e. (down(S) & up(S)) is within S, where down(S)/up(S) are unions of
// the per-node sets. With both stored per node, a convexity test is a few word operations, and
// the fusion closure keeps down/up per candidate so that the test for a union is one AND of ORs.
//
// Cost: two n-bit sets per node, n^2/4 bytes in all (250 KB at 1,000 nodes, 6 MB at 5,000);
// built in O(n * n/64) by a reverse sweep (downstream) and a forward sweep (upstream).
#pragma once

#include <vector>

#include "tessera/graph.h"
#include "tessera/index_set.h"
#include "ir/op_registry.h"

namespace tessera {

class DataflowIndex {
 public:
  // Keeps a reference to `graph`: the graph must outlive the index and stay unchanged.
  explicit DataflowIndex(const Graph& graph);

  const Graph& graph() const { return *graph_; }
  int size() const { return static_cast<int>(producers_.size()); }   // number of nodes

  const std::vector<NodeId>& producers(NodeId n) const { return producers_[static_cast<size_t>(n)]; }
  const std::vector<NodeId>& consumers(NodeId n) const { return consumers_[static_cast<size_t>(n)]; }
  // Direct producers / consumers as sets (same facts as the vectors above).
  const IndexSet& producer_set(NodeId n) const { return producer_set_[static_cast<size_t>(n)]; }
  const IndexSet& consumer_set(NodeId n) const { return consumer_set_[static_cast<size_t>(n)]; }
  const IndexSet& downstream(NodeId n) const { return downstream_[static_cast<size_t>(n)]; }
  const IndexSet& upstream(NodeId n) const { return upstream_[static_cast<size_t>(n)]; }
  // value_consumers()[v] = nodes reading value v, ascending, each once.
  const std::vector<std::vector<NodeId>>& value_consumers() const { return value_consumers_; }

  bool reaches(NodeId from, NodeId to) const { return downstream(from).contains(to); }
  // Some output of n is a graph output.
  bool feeds_graph_output(NodeId n) const { return feeds_output_[static_cast<size_t>(n)]; }
  OpKind kind(NodeId n) const { return kinds_[static_cast<size_t>(n)]; }

  IndexSet empty_set() const { return IndexSet(size()); }
  IndexSet all_nodes() const { return IndexSet::all(size()); }

 private:
  const Graph* graph_;
  std::vector<std::vector<NodeId>> producers_, consumers_;
  std::vector<IndexSet> producer_set_, consumer_set_, downstream_, upstream_;
  std::vector<std::vector<NodeId>> value_consumers_;
  std::vector<bool> feeds_output_;
  std::vector<OpKind> kinds_;
};

}  // namespace tessera
