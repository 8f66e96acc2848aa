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
    uint64_t h = k.covered.fast_hash();   // in memory only
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

  // Dominance (states with crossings, one device). Two states with one covered set have the same
  // live values and can be completed by exactly the same candidates; only their frontier entries
  // (who produced a value, where it was handed) can make a completion cost more for one than for
  // the other, and by at most what the entries that differ can still be charged (entry_bound). So
  // a state is dropped when it costs more than a kept state of its covered set plus that bound:
  // it can never lead to a cheaper plan. Each covered set keeps its few cheapest states (reps).
  const bool prune = problem.tracks_crossings() && !problem.multi_device();
  std::unordered_map<IndexSet, std::vector<int>, IndexSet::Hash> reps;
  const auto& readers = problem.index->value_consumers();
  const size_t nb = problem.backend_names.size();
  auto entry_bound = [&](const IndexSet& covered, const FrontierEntry& e) {
    size_t left = 0;
    for (NodeId r : readers[size_t(e.value)]) left += covered.contains(r) ? 0 : 1;
    Cost sum = Cost::zero(), most = Cost::zero();
    for (size_t b = 0; b < nb; ++b) {
      if ((e.handed >> b) & 1u) continue;
      const Cost& p = problem.boundary_price(e.value, e.backend, static_cast<int>(b));
      sum += p;
      if (most < p) most = p;
    }
    Cost by_readers = Cost::zero();
    for (size_t i = 0; i < left && by_readers < sum; ++i) by_readers += most;
    return by_readers < sum ? by_readers : sum;
  };
  auto dominated = [&](const StateKey& key, const Cost& cost, int self) {
    auto it = reps.find(key.covered);
    if (it == reps.end()) return false;
    for (int r : it->second) {
      if (r == self) continue;
      const State& rep = states[size_t(r)];
      if (!(rep.cost < cost) || rep.key.frontier.size() != key.frontier.size()) continue;
      Cost bound = rep.cost;
      for (size_t i = 0; i < key.frontier.size() && bound < cost; ++i)
        if (rep.key.frontier[i] != key.frontier[i]) bound += entry_bound(key.covered, rep.key.frontier[i]);
      if (bound < cost) return true;
    }
    return false;
  };
  auto keep_rep = [&](int id) {
    constexpr size_t kReps = 4;
    std::vector<int>& v = reps[states[size_t(id)].key.covered];
    if (std::find(v.begin(), v.end(), id) != v.end()) return;
    if (v.size() < kReps) {
      v.push_back(id);
      return;
    }
    auto worst = std::max_element(v.begin(), v.end(), [&](int x, int y) { return states[size_t(x)].cost < states[size_t(y)].cost; });
    if (states[size_t(id)].cost < states[size_t(*worst)].cost) *worst = id;
  };

  std::vector<int> stamp(num_cands, -1);
  std::vector<int> work;
  IndexSet in_closure(n);
  int goal = -1;
  while (!heap.empty()) {
    auto [cost, id] = heap.top();
    heap.pop();
    ++result.stats.popped;
    if (states[size_t(id)].settled || cost != states[size_t(id)].cost) continue;
    if (prune && dominated(states[size_t(id)].key, cost, id)) continue;
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
        if (prune && dominated(next, next_cost, -1)) continue;
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
        if (prune) keep_rep(it->second);
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
