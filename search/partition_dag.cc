#include "search/partition_dag.h"

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

}  // namespace tessera
