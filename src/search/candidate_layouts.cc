// Boundary layouts of candidates at the graph's inputs and outputs (see candidate_layouts.h).
#include "search/candidate_layouts.h"

#include <string>

#include "ir/structural_hash.h"

namespace tessera {

CandidateLayouts::CandidateLayouts(const Graph& graph)
    : graph_(graph),
      graph_input_(graph.values.size(), 0),
      graph_output_(graph.values.size(), 0),
      consumers_(graph.consumers()) {
  for (ValueId v : graph.inputs) graph_input_[static_cast<size_t>(v)] = 1;
  for (ValueId v : graph.outputs) graph_output_[static_cast<size_t>(v)] = 1;
}

std::optional<BoundaryLayouts> CandidateLayouts::of(const SubGraph& sub_graph, const Graph& fn, Layout native) const {
  if (native == Layout::plain) return std::nullopt;
  std::vector<bool> activation = activation_inputs(fn);
  const BoundaryLayouts usual = native_boundary_layouts(fn, native, activation);
  const std::vector<ValueId> args = function_arguments(graph_, sub_graph);
  for (size_t i = 0; i < args.size() && i < activation.size(); ++i)
    if (graph_input_[static_cast<size_t>(args[i])]) activation[i] = false;
  const std::vector<ValueId>& results = sub_graph.outputs();
  std::vector<bool> to_function(results.size(), true);
  for (size_t i = 0; i < results.size(); ++i) {
    const ValueId v = results[i];
    if (!graph_output_[static_cast<size_t>(v)]) continue;
    bool read_outside = false;
    for (NodeId c : consumers_[static_cast<size_t>(v)]) read_outside = read_outside || !sub_graph.inside().contains(c);
    to_function[i] = read_outside;
  }
  BoundaryLayouts runs = native_boundary_layouts(fn, native, activation, to_function);
  if (runs == usual) return std::nullopt;
  return runs;
}

void CandidateLayouts::apply(CostRequest& request, const SubGraph& sub_graph, Layout native) const {
  if (request.function == nullptr) return;
  std::optional<BoundaryLayouts> layouts = of(sub_graph, *request.function, native);
  if (!layouts) return;
  request.hash ^= layouts_tag(*layouts);
  request.layouts = std::make_shared<const BoundaryLayouts>(std::move(*layouts));
}

uint64_t layouts_tag(const BoundaryLayouts& layouts) {
  std::string bytes = "boundary-layouts:";
  for (Layout l : layouts.inputs) bytes += to_string(l), bytes += ',';
  bytes += "->";
  for (Layout l : layouts.outputs) bytes += to_string(l), bytes += ',';
  return fnv1a64(bytes);
}

}  // namespace tessera
