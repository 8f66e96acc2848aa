#include "search/coalesce.h"

#include <algorithm>

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

namespace {

// The partition DAG under merges: vertices are the partitions, then one per node no partition
// holds; succ/pred are sorted vertex lists.
class PartitionDag {
 public:
  PartitionDag(const DataflowIndex& index, const std::vector<Partition>& parts) {
    std::vector<int> vertex(static_cast<size_t>(index.size()), -1);
    for (size_t g = 0; g < parts.size(); ++g) parts[g].nodes.for_each([&](int v) { vertex[size_t(v)] = int(g); });
    int vertices = static_cast<int>(parts.size());
    for (int& x : vertex)
      if (x < 0) x = vertices++;
    succ_.resize(size_t(vertices));
    pred_.resize(size_t(vertices));
    for (int v = 0; v < index.size(); ++v)
      for (NodeId c : index.consumers(v)) {
        const int a = vertex[size_t(v)], b = vertex[size_t(c)];
        if (a == b) continue;
        succ_[size_t(a)].push_back(b);
        pred_[size_t(b)].push_back(a);
      }
    for (auto* lists : {&succ_, &pred_})
      for (auto& l : *lists) {
        std::sort(l.begin(), l.end());
        l.erase(std::unique(l.begin(), l.end()), l.end());
      }
    stamp_.assign(size_t(vertices), 0);
  }

  // Touching vertices of g, ascending.
  std::vector<int> neighbours(int g) const {
    std::vector<int> out;
    std::set_union(succ_[size_t(g)].begin(), succ_[size_t(g)].end(), pred_[size_t(g)].begin(), pred_[size_t(g)].end(),
                   std::back_inserter(out));
    return out;
  }

  // Whether merging touching g and h keeps the DAG acyclic: no path between them but their edge.
  bool can_merge(int g, int h) {
    const bool forward = std::binary_search(succ_[size_t(g)].begin(), succ_[size_t(g)].end(), h);
    return !reaches_around(forward ? g : h, forward ? h : g);
  }

  // h's edges become g's; h is left without any.
  void merge(int g, int h) {
    for (int x : succ_[size_t(h)]) replace(pred_[size_t(x)], h, g);
    for (int x : pred_[size_t(h)]) replace(succ_[size_t(x)], h, g);
    absorb(succ_[size_t(g)], succ_[size_t(h)], g, h);
    absorb(pred_[size_t(g)], pred_[size_t(h)], g, h);
  }

 private:
  // A path from `from` to `to` that does not use the edge from -> to.
  bool reaches_around(int from, int to) {
    ++epoch_;
    std::vector<int> stack;
    for (int x : succ_[size_t(from)])
      if (x != to) stack.push_back(x);
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      if (x == to) return true;
      if (stamp_[size_t(x)] == epoch_) continue;
      stamp_[size_t(x)] = epoch_;
      for (int y : succ_[size_t(x)])
        if (stamp_[size_t(y)] != epoch_) stack.push_back(y);
    }
    return false;
  }

  static void replace(std::vector<int>& list, int from, int to) {
    list.erase(std::lower_bound(list.begin(), list.end(), from));
    auto at = std::lower_bound(list.begin(), list.end(), to);
    if (at == list.end() || *at != to) list.insert(at, to);
  }

  static void absorb(std::vector<int>& into, std::vector<int>& from, int g, int h) {
    std::vector<int> merged;
    std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(merged));
    std::erase_if(merged, [&](int x) { return x == g || x == h; });
    into = std::move(merged);
    from.clear();
  }

  std::vector<std::vector<int>> succ_, pred_;
  std::vector<uint64_t> stamp_;
  uint64_t epoch_ = 0;
};

}  // namespace

std::vector<Partition> coalesce_partitions(const DataflowIndex& index, std::vector<Partition> parts) {
  std::sort(parts.begin(), parts.end(), [](const Partition& a, const Partition& b) { return a.nodes < b.nodes; });
  PartitionDag dag(index, parts);
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
