#include "search/coalesce.h"

#include <algorithm>
#include <set>

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
  const int n = index.size();
  std::sort(parts.begin(), parts.end(), [](const Partition& a, const Partition& b) { return a.nodes < b.nodes; });
  std::vector<int> owner(static_cast<size_t>(n), -1);
  for (size_t g = 0; g < parts.size(); ++g) parts[g].nodes.for_each([&](int v) { owner[size_t(v)] = int(g); });
  std::vector<char> alive(parts.size(), 1);
  auto neighbours = [&](int g) {
    std::set<int> out;
    parts[size_t(g)].nodes.for_each([&](int v) {
      for (NodeId u : index.producers(v)) out.insert(owner[size_t(u)]);
      for (NodeId u : index.consumers(v)) out.insert(owner[size_t(u)]);
    });
    out.erase(g);
    out.erase(-1);
    return out;
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t g = 0; g < parts.size(); ++g) {
      if (!alive[g]) continue;
      bool merged = true;
      while (merged) {
        merged = false;
        for (int h : neighbours(int(g))) {
          if (parts[size_t(h)].backend != parts[g].backend || parts[size_t(h)].device != parts[g].device) continue;
          IndexSet u = parts[g].nodes | parts[size_t(h)].nodes;
          if (!is_convex_set(index, u)) continue;
          parts[size_t(h)].nodes.for_each([&](int v) { owner[size_t(v)] = int(g); });
          if (!contracted_acyclic(index, owner, int(parts.size()))) {
            parts[size_t(h)].nodes.for_each([&](int v) { owner[size_t(v)] = h; });
            continue;
          }
          Partition& into = parts[g];
          Partition& from = parts[size_t(h)];
          into.nodes = std::move(u);
          into.cost += from.cost;
          for (auto& c : from.candidates) into.candidates.push_back(std::move(c));
          std::sort(into.candidates.begin(), into.candidates.end(),
                    [](const ChosenCandidate& a, const ChosenCandidate& b) { return a.nodes < b.nodes; });
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
  for (size_t g = 0; g < parts.size(); ++g)
    if (alive[g]) out.push_back(std::move(parts[g]));
  return out;
}

}  // namespace tessera
