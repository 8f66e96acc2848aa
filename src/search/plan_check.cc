#include "search/plan_check.h"

#include "search/partition_dag.h"

namespace tessera {

std::optional<std::string> check_plan(const Plan& plan, const DataflowIndex& index,
                                      const std::vector<BackendSpec>& backends) {
  const Graph& graph = index.graph();
  IndexSet seen(index.size());
  std::vector<IndexSet> groups;
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    std::string where = "partition " + std::to_string(i) + " (" + p.backend + ")";
    if (p.nodes.size() != index.size()) return where + ": node set over the wrong graph";
    if (p.nodes.empty()) return where + ": empty";
    if (p.nodes.intersects(seen)) return "node '" + graph.node((p.nodes & seen).first()).name + "' is in two partitions";
    seen |= p.nodes;
    if (!is_convex_set(index, p.nodes)) return where + ": not convex";
    const BackendSpec* spec = nullptr;
    for (const BackendSpec& b : backends)
      if (b.name == p.backend) spec = &b;
    if (!spec) return where + ": unknown backend";
    std::optional<std::string> bad;
    p.nodes.for_each([&](int v) {
      if (!bad && !spec->supports(graph.node(v).op))
        bad = where + ": backend does not support " + graph.node(v).op + " ('" + graph.node(v).name + "')";
    });
    if (bad) return bad;
    IndexSet uni(index.size());
    for (const ChosenCandidate& c : p.candidates) {
      if (c.nodes.empty() || !is_convex_set(index, c.nodes)) return where + ": a candidate is empty or not convex";
      if (c.nodes.intersects(uni)) return where + ": candidates overlap";
      uni |= c.nodes;
    }
    if (!p.candidates.empty() && uni != p.nodes) return where + ": nodes differ from the union of its candidates";
    groups.push_back(p.nodes);
  }
  if (seen.count() != index.size())
    return "node '" + graph.node(seen.first_unset()).name + "' is in no partition";
  if (!partitions_acyclic(index, groups)) return "the partition DAG has a cycle";
  return std::nullopt;
}

}  // namespace tessera
