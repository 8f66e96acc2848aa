#include "search/coalesce.h"

#include <algorithm>

#include "search/partition_dag.h"

namespace tessera {

std::vector<Partition> partitions_from_choice(const SearchProblem& problem, const std::vector<int>& chosen) {
  std::vector<Partition> parts;
  for (int c : chosen) {
    const Candidate& cand = problem.candidates[size_t(c)];
    Partition p;
    p.backend = cand.backend;
    p.device = problem.devices[size_t(c)];
    p.nodes = cand.inside();
    p.cost = problem.costs[size_t(c)];
    p.candidates.push_back({cand.inside(), cand.rule, problem.costs[size_t(c)], cand.composites});
    parts.push_back(std::move(p));
  }
  std::sort(parts.begin(), parts.end(), [](const Partition& a, const Partition& b) { return a.nodes < b.nodes; });
  return parts;
}

std::vector<Partition> coalesce_partitions(const DataflowIndex& index, std::vector<Partition> parts) {
  std::sort(parts.begin(), parts.end(), [](const Partition& a, const Partition& b) { return a.nodes < b.nodes; });
  std::vector<IndexSet> groups;
  for (const Partition& p : parts) groups.push_back(p.nodes);
  PartitionDag dag(index, groups);
  const int num_parts = static_cast<int>(parts.size());
  std::vector<char> alive(parts.size(), 1);
  bool changed = true;
  while (changed) {
    changed = false;
    for (int g = 0; g < num_parts; ++g) {
      if (!alive[size_t(g)]) continue;
      bool merged = true;
      while (merged) {
        merged = false;
        for (int h : dag.neighbours(g)) {
          if (h >= num_parts) continue;   // a node no partition holds
          Partition& into = parts[size_t(g)];
          Partition& from = parts[size_t(h)];
          if (from.backend != into.backend || from.device != into.device || !dag.can_merge(g, h)) continue;
          dag.merge(g, h);
          into.nodes |= from.nodes;
          into.cost += from.cost;
          for (auto& c : from.candidates) into.candidates.push_back(std::move(c));   // sorted at the end
          from.candidates.clear();
          from.nodes.clear();
          alive[size_t(h)] = 0;
          merged = changed = true;
          break;   // neighbours changed: recompute
        }
      }
    }
  }
  std::vector<Partition> out;
  for (size_t g = 0; g < parts.size(); ++g) {
    if (!alive[g]) continue;
    std::sort(parts[g].candidates.begin(), parts[g].candidates.end(),
              [](const ChosenCandidate& a, const ChosenCandidate& b) { return a.nodes < b.nodes; });
    out.push_back(std::move(parts[g]));
  }
  return out;
}

}  // namespace tessera
