// Crossing accounting: which values cross devices or backends in a (partial) plan, and what that
// costs.
//
// Terms. A plan assigns each covered node a device and a backend (its candidate's). A value v
// produced on device A and read by a node on device B != A crosses once per distinct B (copies are
// cached on the consumer's device): a *transfer*. A value produced by a node on backend P and read
// by a node on backend Q != P crosses once per distinct Q (once per distinct boundary layout of Q
// when layout conversions are the only prices: SearchProblem::handed_mask): a *boundary* (layout conversion, copy,
// cold cache), priced by CostModel::boundary; graph inputs and constants are never charged, nor is a graph
// output's hand-off to the caller, but a graph output that another backend also reads pays that
// crossing like any other value (search_problem.h). Both are edge costs: they depend only on which backend/device holds
// the producer and which hold the readers, never on how partitions are cut.
//
// For the Dijkstra search the future crossing cost depends on more than the covered set: on where
// every frontier value (produced inside, read outside) lives, and on where it has already been
// shipped. FrontierState is that extra key: sorted (value, device, shipped devices, backend,
// shipped backends) entries. When the problem has one device and no non-zero boundary price, it
// stays empty and the search state is the covered set alone.
//
//   covered {Conv@onednn}   frontier [(%1, cpu, {}, onednn, {})]   add Relu@ref reading %1:
//     + boundary(%1, onednn -> ref); frontier [(%1, .., {ref}) if %1 is still read, (%2, .., ref, {})]
//
// Why the frontier keeps the shipped sets: the second reader of %1 on `ref` pays nothing, so two
// states with the same covered set but different shipped sets have different futures; merging
// them would break Dijkstra's optimality. With them, the cost of every path to a state is exactly
// the candidates' costs plus the crossings the plan so far has caused, and future crossings depend
// only on the state: the argument of collage_search.h goes through unchanged.
//
// Only what a later step can still be charged for is state. The backends that may still read a
// value are those with a usable candidate holding one of its uncovered readers
// (SearchProblem::node_backends); handed bits of other backends are forgotten, and on one device
// an entry whose every such backend has had it handed, or reads it for free, is dropped. Two
// states that differ only there have the same future, so they are one state, and the argument
// above is unchanged. (bounded_search.h bounds what is left: states per covered set.)
//
//   a=Relu on p, b=Abs on q reads it (pays), c=Sigmoid (q only) still to come:
//     before: [(%a, p, handed {q})]   after: []   = the state of "a on q"
//
// Scale: up to 8 devices and 32 backends (bit masks); the frontier of a DAG is its cut width, small.
#pragma once

#include <cstdint>
#include <vector>

#include "search/search_problem.h"

namespace tessera {

struct FrontierEntry {
  ValueId value;
  uint8_t device;
  uint8_t shipped;     // bit d: already copied to device d
  uint8_t backend;     // the producer's backend (index into backend_names)
  uint32_t handed;     // bit b: already handed to backend b
  auto operator<=>(const FrontierEntry&) const = default;
};
using FrontierState = std::vector<FrontierEntry>;   // ascending by value

struct Crossings {
  Cost transfer;
  Cost boundary;
};

// Bytes of a value (its static type; 0 when unknown).
size_t value_bytes(const Graph& graph, ValueId v);

// Adds candidate `c` to (covered, frontier): returns the crossings it incurs and updates
// `frontier` to the frontier of covered | c. `covered` is the set before adding c.
Crossings add_candidate_crossings(const SearchProblem& problem, const IndexSet& covered, int c, FrontierState& frontier);

// One value handed from one backend to another in a complete plan.
struct BoundaryCrossing {
  ValueId value;
  int from;            // backend ids (problem.backend_names)
  int to;
  size_t bytes;
  Cost cost;
};

// Crossings of a complete cover; `boundaries` lists every backend crossing (priced or free),
// ascending by (value, consuming backend).
struct PlanCrossings {
  Cost transfer;
  Cost boundary;
  std::vector<BoundaryCrossing> boundaries;
};
PlanCrossings plan_crossings(const SearchProblem& problem, const std::vector<int>& chosen);

}  // namespace tessera
