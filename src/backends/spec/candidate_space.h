// CandidateSpace: every backend's candidates for one graph, the input of the search.
//
// Terms: for backends b1..bk (BackendSpecs), the candidate space is the union over bi of
// bi.make_rule() run on the graph's DataflowIndex, each candidate tagged with bi's name:
//
//   graph (1,000 nodes) + {ref, onednn, eigen}
//   -> per_backend[0] = ref: 1,000 singles; per_backend[1] = onednn: ...; ...
//   -> all(): one list in candidate_less order (inside set, then backend)
//
// Backends are enumerated independently, in parallel with TBB when threads > 1; each backend's
// list is sorted, and all() merges them in the one total order, so the result is identical for
// every thread count. Rule statistics (rejections by reason, limits hit) stay per backend for
// `tessera candidates --explain`.
#pragma once

#include <string>
#include <vector>

#include "tessera/backend_spec.h"
#include "partition/candidate.h"
#include "partition/dataflow_index.h"
#include "partition/partition_rule.h"

namespace tessera {

struct BackendCandidates {
  std::string backend;
  std::string rule;                   // the rule's describe() line
  std::vector<Candidate> candidates;  // candidate_less order
  RuleStats stats;
};

struct CandidateSpace {
  std::vector<BackendCandidates> per_backend;   // in the order the backends were given
  // Every candidate of every backend, in candidate_less order.
  std::vector<Candidate> all() const;
  size_t size() const;
};

// threads <= 1 runs the backends one after another; otherwise at most `threads` at once.
CandidateSpace enumerate_candidates(const DataflowIndex& index, const std::vector<BackendSpec>& backends,
                                    int threads = 1);

}  // namespace tessera
