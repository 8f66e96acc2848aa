// The boundary layouts a candidate is priced with: what its function would run with in a plan.
//
// A candidate's price is measured with its backend's native boundary layouts on every activation
// (boundary_layout.h): a neighbour in the same layout hands values over as they are, and a
// crossing to another layout is priced apart, as the plan's boundary cost. Two kinds of value
// never cross to a neighbour, though: a graph input and a graph output. Codegen passes a
// parameter that only receives a graph input plain, and returns a result that only becomes a
// graph output no other call reads plain (codegen.cc, native_use); the function converts them
// itself, and the contract charges no crossing for them. Priced native, that conversion would
// be in no price at all:
//
//   Resize(21x28x28 -> 21x224x224) on xnnpack, the graph's output: timed NHWC out, it is cheap;
//   the call in the plan writes NCHW and pays a transpose of the whole image, many times more.
//   So the candidate is measured as the plan runs it, its output plain.
//
// So a candidate whose argument is a graph input, or whose result is a graph output that no node
// outside it reads, is priced with those values plain. Its request's hash mixes the layouts in,
// so it keys its own database entry; every other candidate keeps the native default (nullopt
// here) and its key. The layouts depend on the candidate and the graph alone (not on the plan),
// so prices stay per candidate. Not exact in one case: a candidate whose result is a graph output
// that the plan's next call of the same backend reads (coalesced into one function) would hand it
// on natively; that needs the plan and only errs towards a higher price for such a candidate.
#pragma once

#include <optional>
#include <vector>

#include "ir/boundary_layout.h"
#include "tessera/cost_model.h"
#include "tessera/graph.h"
#include "partition/sub_graph.h"

namespace tessera {

class CandidateLayouts {
 public:
  explicit CandidateLayouts(const Graph& graph);

  // The layouts `fn` (extract_function(graph, sub_graph)) runs with when the candidate is one call
  // of a plan, for a backend of native layout `native`; nullopt where they are the default
  // (native_boundary_layouts(fn, native, activation_inputs(fn))).
  std::optional<BoundaryLayouts> of(const SubGraph& sub_graph, const Graph& fn, Layout native) const;

  // Sets request.layouts to `of(...)` and mixes them into request.hash, when they differ from the
  // default.
  void apply(CostRequest& request, const SubGraph& sub_graph, Layout native) const;

 private:
  const Graph& graph_;
  std::vector<char> graph_input_;    // by value id
  std::vector<char> graph_output_;   // by value id
  std::vector<std::vector<NodeId>> consumers_;
};

// A 64-bit tag of `layouts`, for mixing into a request's hash.
uint64_t layouts_tag(const BoundaryLayouts& layouts);

}  // namespace tessera
