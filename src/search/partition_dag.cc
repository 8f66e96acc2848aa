#include "search/partition_dag.h"

#include <algorithm>
#include <iterator>

namespace tessera {

namespace {

// Successor lists of the contracted graph, one entry per node edge between different vertices
// (duplicates kept): groups are vertices 0..num_groups-1, then one per ungrouped node.
std::vector<std::vector<int>> contracted_successors(const DataflowIndex& index, const std::vector<int>& owner,
                                                    int num_groups) {
  const int n = index.size();
  std::vector<int> vertex(static_cast<size_t>(n));
  int num_vertices = num_groups;
  for (int v = 0; v < n; ++v) vertex[size_t(v)] = owner[size_t(v)] >= 0 ? owner[size_t(v)] : num_vertices++;
  std::vector<std::vector<int>> succ(static_cast<size_t>(num_vertices));
  for (int v = 0; v < n; ++v)
    for (NodeId c : index.consumers(v)) {
      const int a = vertex[size_t(v)], b = vertex[size_t(c)];
      if (a != b) succ[size_t(a)].push_back(b);
    }
  return succ;
}

// owner[n] = the group holding node n, -1 for none.
std::vector<int> owners(const DataflowIndex& index, const std::vector<IndexSet>& groups) {
  std::vector<int> owner(static_cast<size_t>(index.size()), -1);
  for (size_t g = 0; g < groups.size(); ++g) groups[g].for_each([&](int v) { owner[size_t(v)] = int(g); });
  return owner;
}

}  // namespace

bool contracted_acyclic(const DataflowIndex& index, const std::vector<int>& owner, int num_groups) {
  const std::vector<std::vector<int>> succ = contracted_successors(index, owner, num_groups);
  std::vector<int> indegree(succ.size(), 0);
  for (const auto& out : succ)
    for (int y : out) ++indegree[size_t(y)];
  std::vector<int> ready;
  for (size_t x = 0; x < succ.size(); ++x)
    if (indegree[x] == 0) ready.push_back(int(x));
  size_t done = 0;
  while (!ready.empty()) {
    int x = ready.back();
    ready.pop_back();
    ++done;
    for (int y : succ[size_t(x)])
      if (--indegree[size_t(y)] == 0) ready.push_back(y);
  }
  return done == succ.size();
}

bool partitions_acyclic(const DataflowIndex& index, const std::vector<IndexSet>& groups) {
  return contracted_acyclic(index, owners(index, groups), static_cast<int>(groups.size()));
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

PartitionDag::PartitionDag(const DataflowIndex& index, const std::vector<IndexSet>& groups)
    : succ_(contracted_successors(index, owners(index, groups), static_cast<int>(groups.size()))) {
  pred_.resize(succ_.size());
  for (auto& out : succ_) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  for (size_t x = 0; x < succ_.size(); ++x)
    for (int y : succ_[x]) pred_[size_t(y)].push_back(int(x));   // ascending x: sorted already
  stamp_.assign(succ_.size(), 0);
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
