#include "search/exhaustive_search.h"

#include <chrono>

#include "search/partition_dag.h"

namespace tessera {
namespace {

struct Walker {
  const SearchProblem& problem;
  const ExhaustiveOptions& options;
  ExhaustiveResult out;
  std::vector<int> chosen;
  std::vector<int> owner;

  void visit(const IndexSet& covered, const Cost& partial) {
    if (!out.complete) return;
    if (out.result.found && !(partial < out.result.total)) return;
    int first = covered.first_unset();
    if (first >= problem.num_nodes()) {
      if (++out.result.stats.states > options.max_covers) {
        out.complete = false;
        return;
      }
      for (size_t g = 0; g < chosen.size(); ++g)
        problem.candidates[size_t(chosen[g])].inside().for_each([&](int v) { owner[size_t(v)] = int(g); });
      if (!contracted_acyclic(*problem.index, owner, int(chosen.size()))) return;
      SearchResult r = price_cover(problem, chosen);
      if (!out.result.found || r.total < out.result.total) {
        r.stats = out.result.stats;
        out.result = std::move(r);
      }
      return;
    }
    for (int c : problem.by_node[size_t(first)]) {
      const IndexSet& inside = problem.candidates[size_t(c)].inside();
      if (inside.intersects(covered)) continue;
      chosen.push_back(c);
      ++out.result.stats.pushed;
      visit(covered | inside, partial + problem.costs[size_t(c)]);
      chosen.pop_back();
    }
  }
};

}  // namespace

ExhaustiveResult exhaustive_search(const SearchProblem& problem, const ExhaustiveOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  Walker w{problem, options, {}, {}, std::vector<int>(size_t(problem.num_nodes()), -1)};
  w.visit(IndexSet(problem.num_nodes()), Cost::zero());
  w.out.result.stats.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return w.out;
}

}  // namespace tessera
