// Greedy search: how ONNX Runtime assigns nodes to execution providers, as a baseline.
//
// Backends go in the order given (--backends); each in turn takes its largest usable candidates
// among the nodes still unassigned (ties: candidate order, i.e. IndexSet order), skipping any
// candidate that would close a cycle in the partition DAG (unassigned nodes count as partitions
// of their own, so the plan stays acyclic whatever later backends take). Costs are ignored when
// choosing: only reported.
//
//   --backends onednn,ref on Conv->Add->Relu->Reshape:
//     onednn takes {Conv,Add,Relu} (largest), ref takes {Reshape}
//
// Not optimal, by design: it is what a priority-ordered runtime does. Cost: one O(nodes + edges)
// acyclicity check per candidate that fits.
#pragma once

#include <string>
#include <vector>

#include "search/search_problem.h"

namespace tessera {

// found = false when some node is left that no backend's candidates could take.
SearchResult greedy_search(const SearchProblem& problem, const std::vector<std::string>& backend_order);

}  // namespace tessera
