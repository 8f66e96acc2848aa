#include "search/bounded_search.h"

#include <algorithm>
#include <unistd.h>

#include "search/greedy_search.h"
#include "tessera/error.h"

namespace tessera {

size_t default_search_memory() {
  constexpr size_t kCap = size_t{256} << 20;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return kCap;
  return std::min(kCap, size_t(pages) * size_t(page) / 8);
}

Cost per_node_lower_bound(const SearchProblem& problem, const std::vector<char>& allowed) {
  Cost total = Cost::zero();
  for (double share : node_shares(problem, allowed))
    if (share > 0) total += Cost::value(share);
  return total;
}

SearchResult bounded_collage_search(const SearchProblem& problem, const CollageOptions& options,
                                    const std::vector<std::string>& backend_order) {
  SearchResult exact = collage_search(problem, options);
  exact.bound.memory_budget = options.memory_budget;
  if (!exact.out_of_memory) {
    exact.bound.lower_bound = exact.total;
    return exact;
  }
  SearchStatsCounts spent = exact.stats;
  auto add = [&](const SearchStatsCounts& s) {
    spent.states += s.states;
    spent.pushed += s.pushed;
    spent.popped += s.popped;
    spent.ms += s.ms;
    spent.peak_bytes = std::max(spent.peak_bytes, s.peak_bytes);
  };

  CollageOptions blind_options = options;
  blind_options.ignore_crossings = true;
  SearchResult blind = collage_search(problem, blind_options);
  add(blind.stats);
  CollageOptions beam_options = options;
  beam_options.one_state_per_cover = true;
  SearchResult beam = collage_search(problem, beam_options);
  add(beam.stats);

  SearchResult answer;
  std::string fallback;
  if (blind.found) {
    answer = price_cover(problem, blind.chosen);
    fallback = "layout-blind";
  }
  if (beam.found && (!answer.found || !(answer.total < beam.total))) {
    answer = std::move(beam);
    fallback = "beam";
  }
  if (!answer.found) {
    if (!options.allowed.empty())
      throw UserError("--search-memory", std::to_string(options.memory_budget >> 20) + " MB",
                      "the search under this accuracy budget needs more memory; raise --search-memory");
    answer = greedy_search(problem, backend_order);
    add(answer.stats);
    fallback = "greedy";
  }
  answer.stats = spent;
  answer.out_of_memory = false;
  answer.bound.proven = false;
  answer.bound.fallback = fallback;
  answer.bound.memory_budget = options.memory_budget;
  answer.bound.lower_bound = blind.found ? blind.total : per_node_lower_bound(problem, options.allowed);
  return answer;
}

}  // namespace tessera
