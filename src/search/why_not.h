// --why NODE[=BACKEND]: why a node runs where it does, and what each other backend would cost.
//
// For the node and each backend (or the one named), one of:
//   - no candidate: steering refused it (the --pin/--forbid named), the backend's spec refuses the
//     node (op not in its spec, a dtype it does not take: spec_refuses, steering.h), the op is only
//     inside patterns none of which matched here, or every candidate broke the rule's limits;
//   - no price: every candidate holding it is Invalid or Unknown (the first reason given);
//   - its best candidate holding the node (rule, nodes, price), and the cheapest plan that puts
//     the node there: the search run again over the same problem with every candidate holding the
//     node restricted to that backend, its total (partitions and crossings, the search's prices)
//     beside the search's own plan's total and the difference.
//
//   node 'conv1' (Conv) runs on onednn, partition 0
//     onednn   chosen: the search took onednn.fusion Conv+Relu {0,1} 0.412 ms
//     eigen    best eigen.single Conv {0} 0.950 ms; cheapest plan with it: 2.310 ms, +0.538 ms (+30.4%)
//     blas     no candidate: op Conv is not in blas's spec (neither its ops nor its patterns name it)
//
// The re-search is exact (collage over the steered, priced problem, the same memory budget as the
// search); past that budget it falls back and the difference is marked "at most". Models over
// `max_nodes` nodes get no re-search (a second search per backend), only the candidate lines.
// Compared with the search's plan, not the race's winner: the race times whole plans end to end,
// the search's prices are what a difference can be computed in; --explain says when they differ.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "search/partitioner.h"
#include "tessera/backend_spec.h"
#include "search/steering.h"

namespace tessera {

struct WhyQuery {
  NodeId node = kNoNode;
  std::optional<std::string> backend;   // only this backend; none: every backend of the run
};

// "NODE" or "NODE=BACKEND" (split at the last '=' only when what follows names one of `backends`;
// node names may hold '='). UserError::option("why", TEXT, ...) for a node the graph lacks.
WhyQuery parse_why(const std::string& text, const Graph& graph, const std::vector<BackendSpec>& backends);

struct WhyOptions {
  int max_nodes = 5000;        // no re-search above this many nodes
  size_t search_memory = 0;    // 0: default_search_memory()
};

// The text above (ends with a newline). `outcome` is the pipeline's (TunedPlan::search), `steering`
// the rules it ran under, resolved.
std::string explain_why(const PartitionOutcome& outcome, const Graph& graph, const std::vector<BackendSpec>& backends,
                        const Steering& steering, const WhyQuery& query, const WhyOptions& options = {});

}  // namespace tessera
