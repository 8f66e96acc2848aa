// Steering: a user's say over which backend takes which nodes (`--pin SELECTOR=BACKEND`,
// `--forbid SELECTOR=BACKEND`), applied to the candidates before anything is priced.
//
// Terms. A selector names nodes: an exact node name, `op:TYPE` (every node of that op), or a glob
// over node names (`*`, `?`, `[...]`, as fnmatch without FNM_PATHNAME, so `/layer1/*` reaches
// every node under /layer1/). A pin keeps only the pinned backend's candidates for its nodes; a
// forbid drops the forbidden backend's candidates that contain its nodes:
//
//   --backends ref,onednn --pin /fc/Gemm=ref --forbid op:Relu=onednn
//   before: onednn{Conv,Relu} onednn{Gemm} onednn{Relu} ref{Conv} ref{Relu} ref{Gemm} ...
//   after:  onednn{Conv} ref{Conv} ref{Relu} ref{Gemm}       (onednn keeps nothing holding Gemm or Relu)
//
// Why a filter on candidates and not a penalty in the search: a candidate that is never proposed
// is never extracted, hashed or measured (tune measures only what steering leaves), the search
// stays exact over what is left, and every contender of the end-to-end race is built from the
// same filtered candidates, so none can break a pin.
//
// Errors are found before any measurement: a selector that matches no node, a backend not in
// --backends, a node pinned to two backends or pinned and forbidden onto the same one, a pin onto
// a backend whose spec refuses the node (op not in its spec, a dtype it does not take: the rule's
// own reason), and, once candidates are enumerated, a pinned node its backend proposes no
// candidate for (a pattern-only op no pattern matched, limits), or a node left with none at all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/backend_spec.h"
#include "partition/candidate.h"
#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

// "SELECTOR=BACKEND" (split at the last '='; both sides non-empty), else UserError naming the flag.
SteeringRule parse_steering_rule(SteeringRule::Kind kind, const std::string& text);

// Why `spec`'s rule proposes no seed holding node `n` (op not in the spec, a dtype it does not
// take), or nullopt when it may. The reason names the backend, not the node.
std::optional<std::string> spec_refuses(const BackendSpec& spec, const Graph& graph, NodeId n);

// Rules resolved against one graph and its backends.
class Steering {
 public:
  Steering() = default;   // no constraints
  // Throws UserError ("MODEL: --pin SEL=B: WHAT") for the mistakes the header lists, except the
  // ones that need candidates (steer_candidates).
  static Steering resolve(const Graph& graph, const std::vector<BackendSpec>& backends,
                          const std::vector<SteeringRule>& rules, const std::string& model_path);

  bool empty() const { return rules_.empty(); }
  const std::vector<SteeringRule>& rules() const { return rules_; }
  // The nodes rule r matched, ascending.
  const std::vector<NodeId>& matched(size_t r) const { return matched_[r]; }
  // Whether `backend` may take node n / every node of candidate c.
  bool allows(NodeId n, const std::string& backend) const;
  bool allows(const Candidate& c) const;
  // Why not: "pinned to ref by --pin /fc/Gemm=ref" / "forbidden by --forbid op:Relu=onednn".
  std::optional<std::string> refusal(NodeId n, const std::string& backend) const;
  // The backend node n is pinned to, if any.
  std::optional<std::string> pinned(NodeId n) const;

 private:
  std::vector<SteeringRule> rules_;
  std::vector<std::vector<NodeId>> matched_;
  std::vector<int> pin_of_;                   // per node: the pinning rule, -1
  std::vector<std::vector<int>> forbids_of_;  // per node: forbidding rules
};

// The candidates `steering` allows, in their order. Throws UserError when a pinned node is in no
// remaining candidate of its backend, or a node is in no remaining candidate at all (the pins and
// forbids that left it none named).
std::vector<Candidate> steer_candidates(std::vector<Candidate> candidates, const Steering& steering, const Graph& graph,
                                        const std::string& model_path);

}  // namespace tessera
