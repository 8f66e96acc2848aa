// Coalescing: touching partitions of one backend become one partition (one outlined function).
//
// Terms. After the search, each chosen candidate is a partition of its own. Two partitions of the
// same backend are merged when a node of one directly feeds a node of the other, their union is
// convex, and the partition DAG stays acyclic after the merge (two convex sets with a convex union
// can still close a cycle through a third partition, e.g. A -> C -> B with a node of C between
// unrelated nodes of A and B: convexity alone is not enough; see "The check" below). The merged
// partition's cost is the sum of its candidates' costs (docs/design.md), so coalescing never
// changes total_cost; it changes what emit outlines: fewer calls, bigger functions.
//
//   before: byoc{r0,r1}  byoc{r2}  tvm{a}      (r1 -> r2)
//   after:  byoc{r0,r1,r2} [candidates {r0,r1}, {r2}]  tvm{a}
//
// Order: partitions sorted by first node; each, in that order, absorbs its touching same-backend
// neighbours (lowest partition first) until none is left, and the sweep repeats until nothing
// changes. The result depends only on the chosen candidates, never on hash or thread order.
//
// The check, on the partition DAG itself (every node belongs to a partition or is a vertex of its
// own): merging touching g and h, with an edge g -> h, closes a cycle exactly when h is also
// reachable from g through some third vertex (a depth-first search from g's other successors).
// No such path also means the union is convex: a node x outside it on a path from g to h would
// lie in a third vertex on a path g -> x -> h. So one search replaces the per-merge convexity
// test and the rebuild of the whole contracted graph, which made coalescing quadratic in the
// graph (7.9 s of a 10,584-node encoder's 16 s).
// The backend's max_depth/max_exits limits are not re-checked: they bound what one kernel-level
// candidate may be, and a coalesced partition is a function calling several of them.
#pragma once

#include <vector>

#include "search/search_problem.h"
#include "tessera/plan.h"

namespace tessera {

// One Partition per chosen candidate (no merging): backend, device, nodes, cost, candidates.
std::vector<Partition> partitions_from_choice(const SearchProblem& problem, const std::vector<int>& chosen);

// Merges as above. `function` and `function_hash` are left for the caller.
std::vector<Partition> coalesce_partitions(const DataflowIndex& index, std::vector<Partition> partitions);

}  // namespace tessera
