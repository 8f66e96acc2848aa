// Candidate: one way one backend could take one sub-graph (docs/design.md).
//
// Terms: a Candidate is (SubGraph, backend, rule name, composites inside). A Composite is a
// pattern match the backend implements as one fused kernel; it travels with the candidate so that
// emit can wrap it as an inner `Composite` function named after the pattern:
//
//   candidate onednn {Conv_0, Add_1, Relu_2, MaxPool_3}, rule "onednn.fusion"
//     composite "onednn.conv_bias_relu" {0,1,2}   (pattern "Relu(Add(Conv(*, const), const))")
//
// Identity: two candidates are the same when inside set, backend and composite structure (the
// sorted list of (composite name, composite inside)) are equal; the rule name is a debug label and
// does not count. Candidate lists are sorted by candidate_less: inside set's total order (IndexSet
// <=>), then backend name, then composites; that order is the deterministic enumeration order
// every consumer (search, --explain, tests) sees, whatever the thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/index_set.h"
#include "tessera/plan.h"   // Composite
#include "partition/sub_graph.h"

namespace tessera {

struct Candidate {
  SubGraph sub_graph;
  std::string backend;
  std::string rule;                     // debug name of the rule that proposed it
  std::vector<Composite> composites;    // sorted (by inside, then name), disjoint

  const IndexSet& inside() const { return sub_graph.inside(); }
  // "onednn:Conv+Add+Relu{0,1,2}": backend, label and inside set, for logs and --explain.
  std::string debug_name() const;
  // Identity as above (rule name ignored).
  bool same_as(const Candidate& o) const;
  uint64_t hash() const;                // stable; consistent with same_as
};

bool candidate_less(const Candidate& a, const Candidate& b);
// Sorts by candidate_less and drops duplicates (same_as), keeping the first rule name seen.
void sort_and_dedupe(std::vector<Candidate>& candidates);

}  // namespace tessera
