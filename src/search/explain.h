// --explain: why the plan is what it is, in plain text.
//
// For each partition (plan order): backend, nodes (count and label), its cost, the candidates it
// was built from, and the next-best alternative for exactly its nodes: the cheapest acyclic cover
// of those nodes by candidates of the *other* backends (collage_search with every node outside
// the partition pre-covered and the partition's backend excluded), with the difference in cost.
// Before the partitions: the steering the plan obeyed (--pin / --forbid) and, when the end-to-end
// race ran, its latencies and whether it overrode the search (the plan is then the race's winner,
// and the partitions listed are that contender's).
// Then the search statistics (candidates, costed functions, states settled, pushed, popped, times)
// and the rule statistics (rejections by reason, limits hit).
//
//   partition 0  byoc  5 nodes  Relu+Relu+Relu+Add+Relu  cost 24.5706  fn tvmgen_default_byoc_main_0
//     alternative: tvm x5 = 25 (+0.4294)
//
// Cost: one small search per partition, over the candidates inside it only.
#pragma once

#include <string>

#include "search/partitioner.h"

namespace tessera {

std::string explain_plan(const PartitionOutcome& outcome, const Graph& graph);

// A set of nodes as the explanations name it: their ops joined by "+", cut to 60 characters.
std::string nodes_label(const IndexSet& nodes, const Graph& graph);

}  // namespace tessera
