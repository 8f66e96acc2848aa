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

namespace {

// The price of partition p's whole: in the problem (an earlier round's whole, or a candidate that
// happens to cover the same nodes) or among `wholes` priced since. Null when never priced.
const Cost* whole_price(const SearchProblem& problem, const Partition& p, const std::vector<Candidate>& wholes,
                        const std::vector<Cost>& costs) {
  for (size_t c = 0; c < problem.candidates.size(); ++c)
    if (problem.candidates[c].backend == p.backend && problem.candidates[c].inside() == p.nodes) return &problem.costs[c];
  for (size_t c = 0; c < wholes.size() && c < costs.size(); ++c)
    if (wholes[c].backend == p.backend && wholes[c].inside() == p.nodes) return &costs[c];
  return nullptr;
}

}  // namespace

int split_unrunnable_wholes(const SearchProblem& problem, std::vector<Partition>& partitions,
                            const std::vector<Candidate>& wholes, const std::vector<Cost>& costs) {
  std::vector<Partition> out;
  int split = 0;
  for (Partition& p : partitions) {
    const Cost* whole = p.candidates.size() < 2 ? nullptr : whole_price(problem, p, wholes, costs);
    if (!whole || !whole->is_invalid()) {
      out.push_back(std::move(p));
      continue;
    }
    ++split;
    for (ChosenCandidate& c : p.candidates) {
      Partition part;
      part.backend = p.backend;
      part.device = p.device;
      part.nodes = c.nodes;
      part.cost = c.cost;
      part.candidates = {std::move(c)};
      out.push_back(std::move(part));
    }
  }
  partitions = std::move(out);
  return split;
}

int charge_wholes(const SearchProblem& problem, std::vector<Partition>& partitions, const std::vector<Candidate>& wholes,
                  const std::vector<Cost>& costs) {
  auto price_of = [&](const Partition& p) { return whole_price(problem, p, wholes, costs); };
  int replaced = 0;
  for (Partition& p : partitions) {
    if (p.candidates.size() < 2) continue;
    const Cost* whole = price_of(p);
    if (!whole || !whole->is_value()) continue;
    std::vector<Composite> composites;
    for (const ChosenCandidate& c : p.candidates) composites.insert(composites.end(), c.composites.begin(), c.composites.end());
    std::sort(composites.begin(), composites.end());
    p.candidates = {ChosenCandidate{p.nodes, p.backend + ".whole", *whole, std::move(composites)}};
    p.cost = *whole;
    ++replaced;
  }
  return replaced;
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
