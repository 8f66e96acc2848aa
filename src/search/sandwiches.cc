// Sandwiched single-node partitions (see sandwiches.h).
#include "search/sandwiches.h"

#include <set>

namespace tessera {

std::map<NodeId, std::string> sandwiched_nodes(const Graph& graph, const std::vector<Partition>& partitions) {
  std::vector<int> owner(graph.nodes.size(), -1);
  for (size_t p = 0; p < partitions.size(); ++p) partitions[p].nodes.for_each([&](int n) { owner[size_t(n)] = int(p); });
  const auto consumers = graph.consumers();
  std::map<NodeId, std::string> out;
  for (size_t p = 0; p < partitions.size(); ++p) {
    if (partitions[p].nodes.count() != 1) continue;
    const NodeId n = partitions[p].nodes.first();
    const Node& node = graph.node(n);
    std::set<int> before, after;   // partitions feeding the node, partitions it feeds
    for (ValueId v : node.inputs)
      if (v != kNoValue && graph.value(v).producer != kNoNode) before.insert(owner[size_t(graph.value(v).producer)]);
    for (ValueId v : node.outputs)
      if (v != kNoValue)
        for (NodeId c : consumers[size_t(v)]) after.insert(owner[size_t(c)]);
    std::set<std::string> backends;
    for (const std::set<int>* side : {&before, &after})
      for (int q : *side) backends.insert(q >= 0 ? partitions[size_t(q)].backend : std::string());
    if (!before.empty() && !after.empty() && backends.size() == 1 && !backends.begin()->empty() &&
        *backends.begin() != partitions[p].backend)
      out.emplace(n, *backends.begin());
  }
  return out;
}

std::vector<char> allow_without_sandwiches(const SearchProblem& problem, const std::map<NodeId, std::string>& sandwiched) {
  const size_t count = problem.candidates.size();
  std::vector<char> allowed(count, 1);
  for (const auto& [node, backend] : sandwiched) {
    bool covered = false;   // X has a usable candidate for the node
    for (size_t c = 0; c < count && !covered; ++c)
      covered = allowed[c] && problem.usable(int(c)) && problem.candidates[c].backend == backend &&
                problem.candidates[c].inside().contains(node);
    if (!covered) continue;
    for (size_t c = 0; c < count; ++c)
      if (problem.candidates[c].backend != backend && problem.candidates[c].inside().contains(node)) allowed[c] = 0;
  }
  return allowed;
}

}  // namespace tessera
