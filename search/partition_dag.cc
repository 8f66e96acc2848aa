#include "search/partition_dag.h"

#include <algorithm>
#include <iterator>

namespace tessera {

bool contracted_acyclic(const DataflowIndex& index, const std::vector<int>& owner, int num_groups) {
  const int n = index.size();
  // Vertex ids: groups first, then one per ungrouped node.
  std::vector<int> vertex(static_cast<size_t>(n));
  int num_vertices = num_groups;
  for (int v = 0; v < n; ++v) vertex[size_t(v)] = owner[size_t(v)] >= 0 ? owner[size_t(v)] : num_vertices++;
  std::vector<std::vector<int>> succ(static_cast<size_t>(num_vertices));
  std::vector<int> indegree(static_cast<size_t>(num_vertices), 0);
  for (int v = 0; v < n; ++v) {
    for (NodeId c : index.consumers(v)) {
      int a = vertex[size_t(v)], b = vertex[size_t(c)];
      if (a == b) continue;
      succ[size_t(a)].push_back(b);
      ++indegree[size_t(b)];
    }
  }
  std::vector<int> ready;
  for (int x = 0; x < num_vertices; ++x)
    if (indegree[size_t(x)] == 0) ready.push_back(x);
  int done = 0;
  while (!ready.empty()) {
    int x = ready.back();
    ready.pop_back();
    ++done;
    for (int y : succ[size_t(x)])
      if (--indegree[size_t(y)] == 0) ready.push_back(y);
  }
  return done == num_vertices;
}

bool partitions_acyclic(const DataflowIndex& index, const std::vector<IndexSet>& groups) {
  std::vector<int> owner(static_cast<size_t>(index.size()), -1);
  for (size_t g = 0; g < groups.size(); ++g) groups[g].for_each([&](int v) { owner[size_t(v)] = int(g); });
  return contracted_acyclic(index, owner, static_cast<int>(groups.size()));
}

bool is_convex_set(const DataflowIndex& index, const IndexSet& s) {
  IndexSet down(index.size()), up(index.size());
  s.for_each([&](int v) {
    down |= index.downstream(v);
    up |= index.upstream(v);
  });
  return s.and3_within(down, up, down);
}

namespace {

void replace_vertex(std::vector<int>& list, int from, int to) {
  list.erase(std::lower_bound(list.begin(), list.end(), from));
  auto at = std::lower_bound(list.begin(), list.end(), to);
  if (at == list.end() || *at != to) list.insert(at, to);
}

// into = (into | from) without g and h; from emptied.
void absorb(std::vector<int>& into, std::vector<int>& from, int g, int h) {
  std::vector<int> merged;
  std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(merged));
  std::erase_if(merged, [&](int x) { return x == g || x == h; });
  into = std::move(merged);
  from.clear();
}

}  // namespace

PartitionDag::PartitionDag(const DataflowIndex& index, const std::vector<IndexSet>& groups) {
  std::vector<int> vertex(static_cast<size_t>(index.size()), -1);
  for (size_t g = 0; g < groups.size(); ++g) groups[g].for_each([&](int v) { vertex[size_t(v)] = int(g); });
  int vertices = static_cast<int>(groups.size());
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

std::vector<int> PartitionDag::neighbours(int g) const {
  std::vector<int> out;
  std::set_union(succ_[size_t(g)].begin(), succ_[size_t(g)].end(), pred_[size_t(g)].begin(), pred_[size_t(g)].end(),
                 std::back_inserter(out));
  return out;
}

bool PartitionDag::can_merge(int g, int h) {
  const bool forward = std::binary_search(succ_[size_t(g)].begin(), succ_[size_t(g)].end(), h);
  return !reaches_around(forward ? g : h, forward ? h : g);
}

void PartitionDag::merge(int g, int h) {
  for (int x : succ_[size_t(h)]) replace_vertex(pred_[size_t(x)], h, g);
  for (int x : pred_[size_t(h)]) replace_vertex(succ_[size_t(x)], h, g);
  absorb(succ_[size_t(g)], succ_[size_t(h)], g, h);
  absorb(pred_[size_t(g)], pred_[size_t(h)], g, h);
}

bool PartitionDag::reaches_around(int from, int to) {
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

}  // namespace tessera
