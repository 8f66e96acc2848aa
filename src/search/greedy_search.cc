#include "search/greedy_search.h"

#include <algorithm>
#include <chrono>

#include "search/partition_dag.h"

namespace tessera {

SearchResult greedy_search(const SearchProblem& problem, const std::vector<std::string>& backend_order) {
  auto t0 = std::chrono::steady_clock::now();
  const int n = problem.num_nodes();
  std::vector<int> owner(static_cast<size_t>(n), -1);
  std::vector<int> chosen;
  IndexSet assigned(n);
  SearchResult result;
  for (const std::string& backend : backend_order) {
    std::vector<int> ids;
    for (size_t c = 0; c < problem.candidates.size(); ++c)
      if (problem.candidates[c].backend == backend && problem.usable(int(c))) ids.push_back(int(c));
    std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
      return problem.candidates[size_t(a)].sub_graph.size() > problem.candidates[size_t(b)].sub_graph.size();
    });
    for (int c : ids) {
      const IndexSet& inside = problem.candidates[size_t(c)].inside();
      if (inside.intersects(assigned)) continue;
      ++result.stats.pushed;
      const int group = int(chosen.size());
      inside.for_each([&](int v) { owner[size_t(v)] = group; });
      if (!contracted_acyclic(*problem.index, owner, group + 1)) {
        inside.for_each([&](int v) { owner[size_t(v)] = -1; });
        continue;
      }
      chosen.push_back(c);
      assigned |= inside;
    }
  }
  result.stats.states = static_cast<int64_t>(chosen.size());
  if (assigned.count() == n) {
    SearchStatsCounts stats = result.stats;
    result = price_cover(problem, chosen);
    result.stats = stats;
  }
  result.stats.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace tessera
