#include "search/collage_search.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <unordered_map>

#include "search/crossing_accounting.h"

namespace tessera {
namespace {

struct StateKey {
  IndexSet covered;
  FrontierState frontier;
  bool operator==(const StateKey&) const = default;
  std::strong_ordering operator<=>(const StateKey& o) const {
    if (auto c = covered <=> o.covered; c != 0) return c;
    return frontier <=> o.frontier;
  }
};

struct StateKeyHash {
  size_t operator()(const StateKey& k) const {
    uint64_t h = k.covered.hash();
    for (const FrontierEntry& e : k.frontier)
      h = (h ^ (uint64_t(uint32_t(e.value)) << 16 ^ uint64_t(e.device) << 8 ^ e.shipped ^
            uint64_t(e.backend) << 48 ^ uint64_t(e.handed) << 24)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct State {
  StateKey key;
  Cost cost;
  Cost transfer;        // transfer part of cost
  Cost boundary;        // boundary part of cost
  int parent = -1;
  int via = -1;         // candidate added to reach it
  bool settled = false;
};

}  // namespace

SearchResult collage_search(const SearchProblem& problem, const CollageOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  const int n = problem.num_nodes();
  const size_t num_cands = problem.candidates.size();
  auto allowed = [&](int c) {
    return problem.usable(c) && (options.allowed.empty() || options.allowed[size_t(c)]);
  };
  // Q(v): external producers of every allowed candidate containing v.
  std::vector<IndexSet> q(static_cast<size_t>(n), IndexSet(n));
  for (int v = 0; v < n; ++v)
    for (int c : problem.by_node[size_t(v)])
      if (allowed(c)) q[size_t(v)] |= problem.ext[size_t(c)];

  std::vector<State> states;
  std::unordered_map<StateKey, int, StateKeyHash> ids;
  using Entry = std::pair<Cost, int>;
  auto worse = [&](const Entry& a, const Entry& b) {   // std::priority_queue pops the "largest"
    if (auto c = a.first <=> b.first; c != 0) return c > 0;
    return states[size_t(a.second)].key > states[size_t(b.second)].key;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(worse)> heap(worse);
  SearchResult result;

  StateKey start{options.initial.size() == n ? options.initial : IndexSet(n), {}};
  states.push_back({start, Cost::zero(), Cost::zero(), Cost::zero(), -1, -1, false});
  ids.emplace(start, 0);
  heap.push({Cost::zero(), 0});
  ++result.stats.pushed;

  std::vector<int> stamp(num_cands, -1);
  std::vector<int> work;
  IndexSet in_closure(n);
  int goal = -1;
  while (!heap.empty()) {
    auto [cost, id] = heap.top();
    heap.pop();
    ++result.stats.popped;
    if (states[size_t(id)].settled || cost != states[size_t(id)].cost) continue;
    states[size_t(id)].settled = true;
    ++result.stats.states;
    const IndexSet covered = states[size_t(id)].key.covered;   // copy: states may reallocate
    const int first = covered.first_unset();
    if (first >= n) {
      goal = id;
      break;
    }
    // N*: closure of {first} under v -> Q(v) \ covered.
    in_closure.clear();
    in_closure.insert(first);
    work.assign(1, first);
    for (size_t w = 0; w < work.size(); ++w) {
      (q[size_t(work[w])] - covered - in_closure).for_each([&](int u) {
        in_closure.insert(u);
        work.push_back(u);
      });
    }
    std::sort(work.begin(), work.end());
    for (int v : work) {
      for (int c : problem.by_node[size_t(v)]) {
        if (stamp[size_t(c)] == id || !allowed(c)) continue;
        stamp[size_t(c)] = id;
        const IndexSet& inside = problem.candidates[size_t(c)].inside();
        if (inside.intersects(covered) || !problem.ext[size_t(c)].is_subset_of(covered)) continue;
        StateKey next{covered | inside, states[size_t(id)].key.frontier};
        Crossings step;   // crossings caused by adding c (none on one device without boundary prices)
        if (problem.tracks_crossings()) step = add_candidate_crossings(problem, covered, c, next.frontier);
        Cost next_cost = states[size_t(id)].cost + problem.costs[size_t(c)] + step.transfer + step.boundary;
        Cost transfer = states[size_t(id)].transfer + step.transfer;
        Cost boundary = states[size_t(id)].boundary + step.boundary;
        auto [it, inserted] = ids.emplace(next, int(states.size()));
        if (inserted) {
          states.push_back({std::move(next), next_cost, transfer, boundary, id, c, false});
        } else {
          State& s = states[size_t(it->second)];
          if (s.settled || !(next_cost < s.cost)) continue;
          s.cost = next_cost;
          s.transfer = transfer;
          s.boundary = boundary;
          s.parent = id;
          s.via = c;
        }
        heap.push({next_cost, it->second});
        ++result.stats.pushed;
      }
    }
  }
  if (goal >= 0) {
    result.found = true;
    result.total = states[size_t(goal)].cost;
    result.transfer = states[size_t(goal)].transfer;
    result.boundary = states[size_t(goal)].boundary;
    for (int s = goal; states[size_t(s)].parent >= 0; s = states[size_t(s)].parent)
      result.chosen.push_back(states[size_t(s)].via);
    std::sort(result.chosen.begin(), result.chosen.end());
  }
  result.stats.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace tessera
