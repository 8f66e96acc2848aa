#include "search/single_backend_search.h"

#include "search/bounded_search.h"

#include "search/collage_search.h"

namespace tessera {

SearchResult single_backend_search(const SearchProblem& problem, const std::string& backend,
                                   const std::string& fallback, size_t memory_budget) {
  const size_t m = problem.candidates.size();
  IndexSet takes(problem.num_nodes());
  for (size_t c = 0; c < m; ++c)
    if (problem.candidates[c].backend == backend && problem.usable(int(c))) takes |= problem.candidates[c].inside();
  CollageOptions options;
  options.memory_budget = memory_budget;
  options.allowed.assign(m, 0);
  for (size_t c = 0; c < m; ++c) {
    const Candidate& cand = problem.candidates[c];
    options.allowed[c] = cand.backend == backend || (cand.backend == fallback && cand.inside().disjoint(takes));
  }
  SearchResult r = bounded_collage_search(problem, options, {});
  if (r.found) return r;
  for (size_t c = 0; c < m; ++c) options.allowed[c] = options.allowed[c] || problem.candidates[c].backend == fallback;
  SearchResult second = bounded_collage_search(problem, options, {});
  second.stats.pushed += r.stats.pushed;
  second.stats.popped += r.stats.popped;
  second.stats.states += r.stats.states;
  second.stats.ms += r.stats.ms;
  return second;
}

}  // namespace tessera
