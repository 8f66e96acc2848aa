// Partition DAG: the graph whose vertices are partitions (groups of nodes) and whose edges are
// the node edges between different groups. A plan is a valid module only if this graph is acyclic.
//
//   groups {a, m} {p} with p -> m:  {p} -> {a,m}          acyclic
//   groups {a, c} {b} with a -> b -> c:  {a,c} <-> {b}     cycle (also: {a,c} not convex)
//
// Non-convexity of one group always shows up as a cycle once the nodes in between are their own
// group, but two convex groups can still form a cycle between them: that is the check here.
// Kahn's algorithm over the contracted graph, O(nodes + edges) per call; ungrouped nodes
// (owner -1) count as groups of their own. PartitionDag keeps that graph across merges
// (coalescing): a merge is checked by a search for a path around the merged edge, over the
// vertices reachable from one end, instead of a rebuild per merge.
#pragma once

#include <cstdint>
#include <vector>

#include "partition/dataflow_index.h"
#include "tessera/index_set.h"

namespace tessera {

// owner[n] = group of node n in [0, num_groups), or -1 for a node alone.
bool contracted_acyclic(const DataflowIndex& index, const std::vector<int>& owner, int num_groups);

// Convenience: groups given as disjoint sets.
bool partitions_acyclic(const DataflowIndex& index, const std::vector<IndexSet>& groups);

// (down(S) & up(S)) within S, from the index's reachability sets.
bool is_convex_set(const DataflowIndex& index, const IndexSet& s);

// The partition DAG of a list of groups, kept up to date under merges (coalescing,
// src/search/coalesce.h): vertices are the groups, then one per node no group holds.
class PartitionDag {
 public:
  PartitionDag(const DataflowIndex& index, const std::vector<IndexSet>& groups);
  // Vertices touching g (an edge either way), ascending.
  std::vector<int> neighbours(int g) const;
  // Whether merging touching g and h keeps the DAG acyclic: no path between them but their edge.
  bool can_merge(int g, int h);
  // h's edges become g's; h is left without any.
  void merge(int g, int h);

 private:
  bool reaches_around(int from, int to);   // a path from -> to not using the edge from -> to
  std::vector<std::vector<int>> succ_, pred_;   // sorted vertex lists
  std::vector<uint64_t> stamp_;
  uint64_t epoch_ = 0;
};

}  // namespace tessera
