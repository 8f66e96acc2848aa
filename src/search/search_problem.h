// SearchProblem: what every search strategy sees, and SearchResult: what it answers.
//
// Terms. The problem is the frozen graph's DataflowIndex plus the costed candidates of every
// backend (candidate.h order) and, per candidate, the device it runs on. A search picks a set of
// candidates (by index into `candidates`) that covers every node exactly once and whose partition
// DAG is acyclic; its cost is the sum of the chosen candidates' costs plus transfer costs.
//
//   candidates  [tvm{0} 2.0] [byoc{0} 1.0] [tvm{1} 2.0] [byoc{0,1} 1.9] ...
//   search  ->  chosen {3}, total 1.9
//
// Transfer (crossing_accounting.h): a value produced by a node on device A and read by a chosen
// candidate on device B != A costs CostModel::transfer(bytes, A, B), once per (value, device).
// Graph inputs and outputs are not charged (they live wherever their first user wants them).
//
// Boundaries (crossing_accounting.h): a value produced by a node of a chosen candidate on backend
// A and read by a chosen candidate on backend B != A costs CostModel::boundary(type, A, B), once
// per (value, B), on top of any transfer. Graph inputs and constants are not charged, nor is
// the hand-off of a graph output to the caller; a graph output read by another backend pays. Prices are looked up once per (value, A, B) by prepare(); when every price is zero the
// search does not track backends at all. Layout conversions (boundary_layout.h) are part of the
// price: where A's and B's boundary layouts differ for a layout-sensitive value, the conversion's
// price (conversion_price) is added to CostModel::boundary's.
//
// Candidates whose cost is not a Value (Unknown, Invalid) are never chosen: a plan's cost must be
// a number. `ext[i]` (external producers: nodes outside candidate i that feed it) is precomputed
// once, because every strategy asks "are this candidate's inputs covered?".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/boundary_layout.h"
#include "partition/candidate.h"
#include "tessera/cost.h"
#include "tessera/cost_model.h"
#include "partition/dataflow_index.h"
#include "tessera/index_set.h"

namespace tessera {

struct SearchProblem {
  const DataflowIndex* index = nullptr;
  std::vector<Candidate> candidates;     // sorted (candidate_less), deduplicated
  std::vector<Cost> costs;               // costs[i] for candidates[i]
  std::vector<std::string> devices;      // devices[i]: device of candidates[i]'s backend
  std::vector<std::optional<double>> errors;   // errors[i]: measured error (CostEntry::error), if any
  const CostModel* transfer_model = nullptr;   // prices device crossings; nullptr = all free
  const CostModel* boundary_model = nullptr;   // prices backend crossings; nullptr = all free
  // Boundary layout per backend name (absent: plain), and what converting a value of a type from
  // one layout to another costs; unset: conversions are free.
  std::map<std::string, Layout> backend_layouts;
  std::function<Cost(const TensorType&, Layout from, Layout to)> conversion_price;

  // Derived by prepare(): external producers per candidate, candidate ids per node, device ids.
  std::vector<IndexSet> ext;
  std::vector<std::vector<int>> by_node;       // by_node[n]: usable candidates containing n, ascending
  std::vector<int> device_id;                  // per candidate, index into device_names
  std::vector<std::string> device_names;       // sorted, distinct
  std::vector<int> backend_id;                 // per candidate, index into backend_names
  std::vector<std::string> backend_names;      // sorted, distinct
  // Boundary prices: boundary_slot[v] >= 0 for a value that may be charged (produced by a node,
  // read by a node; graph outputs included); its price from backend a to backend b is
  // boundary_prices[slot * B * B + a * B + b], B = backend_names.size().
  std::vector<int> boundary_slot;
  std::vector<Cost> boundary_prices;
  bool has_boundaries = false;                 // some boundary price is not zero
  // What the search state needs to know of a value (crossing_accounting.h): boundary_priced[slot]
  // when some price of the value is not zero (a value whose prices are all zero is never tracked
  // on one device), and price_class[slot * B + a]: the smallest backend whose prices for the value
  // equal backend a's as producer (backends of one boundary layout are one class), so states that
  // differ only in which of two equivalent backends produced a value are one state.
  std::vector<char> boundary_priced;
  std::vector<uint8_t> price_class;
  // handed_mask[b]: the backends a value handed to backend b counts as handed to. {b} under the
  // contract's prices (once per (value, B)); when the only prices are layout conversions, every
  // backend of b's layout, since the executor converts a value once per layout.
  std::vector<uint32_t> handed_mask;
  // node_backends[n]: bit b set when some usable candidate of backend b holds node n. A value's
  // future readers can only be on the backends of its uncovered readers' bits, so a frontier
  // entry need not remember anything about other backends (crossing_accounting.h).
  std::vector<uint32_t> node_backends;

  void prepare();                              // call once after filling the fields above
  void prepare_boundaries();                   // (part of prepare) the boundary price table
  int num_nodes() const { return index->size(); }
  bool usable(int c) const { return costs[static_cast<size_t>(c)].is_value(); }
  bool multi_device() const { return device_names.size() > 1; }
  // Whether the search must carry the frontier (values read later, where they live) in its state.
  bool tracks_crossings() const { return multi_device() || has_boundaries; }
  const Cost& boundary_price(ValueId v, int from, int to) const {
    size_t b = backend_names.size();
    return boundary_prices[size_t(boundary_slot[size_t(v)]) * b * b + size_t(from) * b + size_t(to)];
  }
};

struct SearchStatsCounts {
  int64_t states = 0;          // distinct states settled (collage) or covers examined (exhaustive)
  int64_t pushed = 0;
  int64_t popped = 0;
  double ms = 0.0;
  int64_t peak_bytes = 0;      // collage: what its states, keys and queue held at most (estimate)
};

// Whether a search's answer is proven optimal and, when it is not (bounded_search.h), how it was
// found and how far it can be from the optimum: total - lower_bound at most.
struct SearchBound {
  bool proven = true;
  std::string fallback;        // "layout-blind", "beam" or "greedy" when not proven
  Cost lower_bound;            // on every plan's total (proven: the answer's total)
  size_t memory_budget = 0;    // bytes the exact search was given (0: no limit)
};

struct SearchResult {
  bool found = false;
  std::vector<int> chosen;     // candidate indices, ascending
  Cost total;                  // candidates + transfer + boundary
  Cost transfer;
  Cost boundary;
  SearchStatsCounts stats;
  bool out_of_memory = false;  // collage stopped at its memory budget (found is false then)
  SearchBound bound;
};

// Each node's cheapest share of a candidate holding it, cost / size, over the usable candidates
// that `allowed` admits (empty: all); 0 for a node none holds. Any cover's candidates split their
// costs into exactly such shares, so the shares of a set of nodes bound from below what covering
// them costs (the A* estimate of collage_search.h, the lower bound of bounded_search.h).
std::vector<double> node_shares(const SearchProblem& problem, const std::vector<char>& allowed);

// Sum of chosen candidate costs plus transfer and boundary costs, for any complete cover (no
// validity check).
SearchResult price_cover(const SearchProblem& problem, std::vector<int> chosen);

}  // namespace tessera
