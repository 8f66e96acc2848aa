// Partition DAG: the graph whose vertices are partitions (groups of nodes) and whose edges are
// the node edges between different groups. A plan is a valid module only if this graph is acyclic.
//
//   groups {a, m} {p} with p -> m:  {p} -> {a,m}          acyclic
//   groups {a, c} {b} with a -> b -> c:  {a,c} <-> {b}     cycle (also: {a,c} not convex)
//
// Non-convexity of one group always shows up as a cycle once the nodes in between are their own
// group, but two convex groups can still form a cycle between them: that is the check here.
// Kahn's algorithm over the contracted graph, O(nodes + edges) per call; ungrouped nodes
// (owner -1) count as groups of their own.
#pragma once

#include <vector>

#include "tessera/dataflow_index.h"
#include "tessera/index_set.h"

namespace tessera {

// owner[n] = group of node n in [0, num_groups), or -1 for a node alone.
bool contracted_acyclic(const DataflowIndex& index, const std::vector<int>& owner, int num_groups);

// Convenience: groups given as disjoint sets.
bool partitions_acyclic(const DataflowIndex& index, const std::vector<IndexSet>& groups);

// (down(S) & up(S)) within S, from the index's reachability sets.
bool is_convex_set(const DataflowIndex& index, const IndexSet& s);

}  // namespace tessera
