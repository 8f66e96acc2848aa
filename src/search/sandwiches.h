// Sandwiches: a partition of one node whose every neighbour partition belongs to one other backend.
//
//   xnnpack{Conv} ──▶ halide{Relu} ──▶ xnnpack{Conv}       the Relu is sandwiched (backend X = xnnpack)
//
// The search prices each candidate as it was measured (alone, with its backend's boundary
// layouts), so a lone node on another backend between two partitions of X can come out a few
// microseconds cheaper than X taking it, while what runs pays two more calls and two crossings
// into a cold cache (PaddleOCR cls's tuned plan: 58 partitions, 23 of one node). Whether that
// pays is a question for end-to-end measurement, not for the candidates' sum: `tune`'s verified
// choice (src/tune/plan_verification.h) adds the contender "collage:merged", the cheapest plan in
// which every sandwiched node is covered by its X, and ships it only when it measures faster.
//
// Between: some partition holds a producer of the node's inputs and some a consumer of its
// outputs, and all of them are on X. A node fed only by graph inputs or feeding only graph
// outputs, one with neighbours on two backends, or one X has no candidate for, is no sandwich.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "search/search_problem.h"
#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

// Sandwiched node -> the backend X around it, over the plan's partitions.
std::map<NodeId, std::string> sandwiched_nodes(const Graph& graph, const std::vector<Partition>& partitions);

// The candidates of `problem` the search may use when each sandwiched node must be covered by
// its X: every candidate that contains such a node on another backend is left out. Nodes X has
// no usable candidate for keep theirs.
std::vector<char> allow_without_sandwiches(const SearchProblem& problem, const std::map<NodeId, std::string>& sandwiched);

}  // namespace tessera
