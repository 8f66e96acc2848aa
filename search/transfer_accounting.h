// Transfer accounting: which values cross devices in a (partial) plan, and what that costs.
//
// Terms. A plan assigns each covered node a device (its candidate's backend's device). A value v
// produced on device A and read by a node on device B != A crosses once per distinct B (copies are
// cached on the consumer's device). The whole-plan price is plan_transfer_cost.
//
// For the Dijkstra search the future transfer cost depends on more than the covered set: on the
// device of every frontier value (produced inside, read outside) and on the devices it has already
// been shipped to. FrontierState is that extra key: sorted (value, device, shipped-mask) entries.
// With one device in the problem it stays empty and the search state is the covered set alone.
//
//   covered {Conv@gpu}   frontier [(%1, gpu, {})]   add Relu@cpu reading %1:
//     + transfer(bytes(%1), gpu, cpu); frontier [(%2, cpu, {})]   (%1 no longer read outside)
//
// Scale: up to 8 devices (one byte of mask); the frontier of a DAG is its cut width, small.
#pragma once

#include <cstdint>
#include <vector>

#include "search/search_problem.h"

namespace tessera {

struct FrontierEntry {
  ValueId value;
  uint8_t device;
  uint8_t shipped;     // bit d: already copied to device d
  auto operator<=>(const FrontierEntry&) const = default;
};
using FrontierState = std::vector<FrontierEntry>;   // ascending by value

// Bytes of a value (its static type; 0 when unknown).
size_t value_bytes(const Graph& graph, ValueId v);

// Adds candidate `c` to (covered, frontier): returns the transfer cost it incurs and updates
// `frontier` to the frontier of covered | c. `covered` is the set before adding c.
Cost add_candidate_transfer(const SearchProblem& problem, const IndexSet& covered, int c, FrontierState& frontier);

// Transfer cost of a complete cover.
Cost plan_transfer_cost(const SearchProblem& problem, const std::vector<int>& chosen);

}  // namespace tessera
