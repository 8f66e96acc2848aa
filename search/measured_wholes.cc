#include "search/measured_wholes.h"

#include <algorithm>
#include <numeric>

namespace tessera {

std::vector<Candidate> whole_candidates(const SearchProblem& problem, const std::vector<Partition>& partitions) {
  std::vector<Candidate> out;
  for (const Partition& p : partitions) {
    if (p.candidates.size() < 2) continue;
    bool known = false;
    for (size_t c = 0; c < problem.candidates.size() && !known; ++c)
      known = problem.candidates[c].backend == p.backend && problem.candidates[c].inside() == p.nodes;
    if (known) continue;
    Candidate whole{SubGraph(*problem.index, p.nodes), p.backend, p.backend + ".whole", {}};
    for (const ChosenCandidate& c : p.candidates)
      whole.composites.insert(whole.composites.end(), c.composites.begin(), c.composites.end());
    std::sort(whole.composites.begin(), whole.composites.end());
    out.push_back(std::move(whole));
  }
  return out;
}

void add_candidates(SearchProblem& problem, std::vector<Candidate> candidates, std::vector<Cost> costs,
                    std::vector<std::string> devices, std::vector<std::optional<double>> errors) {
  // errors is parallel to candidates (or empty), as problem.errors is to problem.candidates (or empty).
  const bool with_errors = !errors.empty() || !problem.errors.empty();
  if (with_errors) problem.errors.resize(problem.candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    problem.candidates.push_back(std::move(candidates[i]));
    problem.costs.push_back(std::move(costs[i]));
    problem.devices.push_back(std::move(devices[i]));
    if (with_errors) problem.errors.push_back(i < errors.size() ? errors[i] : std::nullopt);
  }
  std::vector<size_t> order(problem.candidates.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return candidate_less(problem.candidates[a], problem.candidates[b]);
  });
  SearchProblem sorted;
  for (size_t i : order) {
    sorted.candidates.push_back(std::move(problem.candidates[i]));
    sorted.costs.push_back(std::move(problem.costs[i]));
    sorted.devices.push_back(std::move(problem.devices[i]));
    if (with_errors) sorted.errors.push_back(problem.errors[i]);
  }
  problem.candidates = std::move(sorted.candidates);
  problem.costs = std::move(sorted.costs);
  problem.devices = std::move(sorted.devices);
  if (with_errors) problem.errors = std::move(sorted.errors);
  problem.prepare();
}

}  // namespace tessera
