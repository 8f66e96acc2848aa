#include "search/collage_search.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <queue>
#include <tuple>
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
  int rank = 0;         // no node of a lower rank is uncovered (late_order)
  double h = 0.0;       // the A* estimate of what covering the rest costs at least
};

// A queue entry: the state's cost when pushed (a later, cheaper path makes the entry stale) and
// that cost plus the state's estimate, the order of the queue.
struct Entry {
  double f;
  double g;
  int id;
};

// The order in which the search takes its next node n: depth-first post-order from the sinks,
// visiting a node's producers with the most ancestors first, so a node with few ancestors comes
// right before the consumer that reads it. Any topological order keeps the search exact
// (collage_search.h); this one keeps N* small. In model order, or in a post-order that visits
// producers as listed, a node written early but read late (a bias reshaped at the top of an
// exported file, added by the last layer) is the lowest uncovered node while nearly everything
// is uncovered; a candidate fusing it with its reader pulls the reader's whole ancestry into N*,
// and the search covers the graph's source nodes in every combination before it moves on.
std::vector<int> late_order(const DataflowIndex& index) {
  const int n = index.size();
  std::vector<int> ancestors(static_cast<size_t>(n));
  for (int v = 0; v < n; ++v) ancestors[size_t(v)] = index.upstream(v).count();
  std::vector<std::vector<int>> visit(static_cast<size_t>(n));   // producers, most ancestors (then latest) first
  for (int v = 0; v < n; ++v) {
    visit[size_t(v)] = index.producers(v);
    std::sort(visit[size_t(v)].begin(), visit[size_t(v)].end(), [&](int a, int b) {
      return std::tie(ancestors[size_t(a)], a) > std::tie(ancestors[size_t(b)], b);
    });
  }
  std::vector<int> order;
  order.reserve(size_t(n));
  std::vector<char> seen(size_t(n), 0);
  std::vector<std::pair<int, size_t>> stack;   // (node, next producer to visit)
  for (int root = 0; root < n; ++root) {
    if (!index.consumers(root).empty() || seen[size_t(root)]) continue;
    stack.push_back({root, 0});
    seen[size_t(root)] = 1;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      const auto& producers = visit[size_t(v)];
      if (next < producers.size()) {
        int p = producers[next++];
        if (!seen[size_t(p)]) {
          seen[size_t(p)] = 1;
          stack.push_back({p, 0});
        }
        continue;
      }
      order.push_back(v);
      stack.pop_back();
    }
  }
  return order;
}

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

  const std::vector<int> order = late_order(*problem.index);
  const bool track = problem.tracks_crossings() && !options.ignore_crossings;
  const bool beam = options.one_state_per_cover && track;
  std::vector<State> states;
  std::unordered_map<StateKey, int, StateKeyHash> ids;                 // exact: state per key
  std::unordered_map<IndexSet, int, IndexSet::Hash> by_cover;          // beam: state per covered set
  auto worse = [&](const Entry& a, const Entry& b) {   // std::priority_queue pops the "largest"
    if (a.f != b.f) return a.f > b.f;
    return states[size_t(a.id)].key > states[size_t(b.id)].key;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(worse)> heap(worse);
  SearchResult result;

  // The A* estimate (collage_search.h): each node's cheapest share of an allowed candidate holding
  // it, cost / size, a hair under (float sums of shares must not pass the cost they split); a
  // state's estimate is the shares of its uncovered nodes, a candidate's the shares it covers.
  std::vector<double> share = node_shares(problem, options.allowed);
  for (double& s : share) s *= 1.0 - 1e-9;
  std::vector<double> covers_share(num_cands, -1.0);   // per candidate, computed when first met
  StateKey start{options.initial.size() == n ? options.initial : IndexSet(n), {}};
  double start_h = 0.0;
  for (int v = 0; v < n; ++v)
    if (!start.covered.contains(v)) start_h += share[size_t(v)];
  states.push_back({start, Cost::zero(), Cost::zero(), Cost::zero(), -1, -1, false, 0, start_h});
  if (beam)
    by_cover.emplace(start.covered, 0);
  else
    ids.emplace(start, 0);
  heap.push({start_h, 0.0, 0});
  ++result.stats.pushed;

  // Memory held, estimated: the state records (their vector's capacity), per state its key twice
  // (the record's and the table's copy: the covered set's words, the frontier's entries) and a
  // hash node, per covered set in the dominance table its key and list, and the queue's entries
  // (twice: its vector grows by doubling). Allocator overheads make the real figure somewhat larger.
  constexpr size_t kNodeBytes = 64;
  size_t key_bytes = 0;
  auto held = [&] {
    return states.capacity() * sizeof(State) + key_bytes + 2 * heap.size() * sizeof(Entry);
  };
  // What held() becomes after one more push, and one more state with a key of `bytes` when
  // `grows` (the states' vector may double).
  auto held_with = [&](bool grows, size_t bytes) {
    size_t cap = states.capacity();
    if (grows && states.size() == cap) cap = std::max<size_t>(16, 2 * cap);
    return cap * sizeof(State) + key_bytes + bytes + 2 * (heap.size() + 1) * sizeof(Entry);
  };

  // Dominance (states with crossings, one device). Two states with one covered set have the same
  // live values and can be completed by exactly the same candidates; only their frontier entries
  // (who produced a value, where it was handed) can make a completion cost more for one than for
  // the other, and by at most what the entries that differ can still be charged (entry_bound). So
  // a state is dropped when it costs more than a kept state of its covered set plus that bound:
  // it can never lead to a cheaper plan. Each covered set keeps its few cheapest states (reps).
  const bool prune = track && !beam && !problem.multi_device();
  std::unordered_map<IndexSet, std::vector<int>, IndexSet::Hash> reps;
  const auto& readers = problem.index->value_consumers();
  // What entry e of a state over `covered` may still be charged: at most one price per backend
  // that may still read it and has not had it handed, and at most one per reader left.
  auto entry_bound = [&](const IndexSet& covered, const FrontierEntry& e) {
    size_t left = 0;
    uint32_t reach = 0;
    for (NodeId r : readers[size_t(e.value)])
      if (!covered.contains(r)) {
        ++left;
        reach |= problem.node_backends[size_t(r)];
      }
    Cost sum = Cost::zero(), most = Cost::zero();
    for (uint32_t open = reach & ~e.handed; open; open &= open - 1) {
      const Cost& p = problem.boundary_price(e.value, e.backend, std::countr_zero(open));
      sum += p;
      if (most < p) most = p;
    }
    Cost by_readers = Cost::zero();
    for (size_t i = 0; i < left && by_readers < sum; ++i) by_readers += most;
    return by_readers < sum ? by_readers : sum;
  };
  // A state is dominated by a cheaper kept state R of its covered set when R's cost plus what R's
  // entries that it does not share may still be charged is below its own cost (an entry it lacks
  // costs R nothing: frontier entries exist only while a charge is possible).
  auto dominated = [&](const StateKey& key, const Cost& cost, int self) {
    auto it = reps.find(key.covered);
    if (it == reps.end()) return false;
    for (int r : it->second) {
      if (r == self) continue;
      const State& rep = states[size_t(r)];
      if (!(rep.cost < cost)) continue;
      Cost bound = rep.cost;
      size_t j = 0;
      for (const FrontierEntry& e : rep.key.frontier) {
        while (j < key.frontier.size() && key.frontier[j].value < e.value) ++j;
        if (j < key.frontier.size() && key.frontier[j] == e) continue;
        bound += entry_bound(key.covered, e);
        if (!(bound < cost)) break;
      }
      if (bound < cost) return true;
    }
    return false;
  };
  auto keep_rep = [&](int id) {
    constexpr size_t kReps = 4;
    auto [slot, fresh] = reps.try_emplace(states[size_t(id)].key.covered);
    if (fresh) key_bytes += slot->first.memory_bytes() + kNodeBytes + 4 * sizeof(int);
    std::vector<int>& v = slot->second;
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
    const auto [f, g, id] = heap.top();
    heap.pop();
    ++result.stats.popped;
    if (states[size_t(id)].settled || g != states[size_t(id)].cost.number()) continue;
    if (prune && dominated(states[size_t(id)].key, states[size_t(id)].cost, id)) continue;
    states[size_t(id)].settled = true;
    ++result.stats.states;
    const IndexSet covered = states[size_t(id)].key.covered;   // copy: states may reallocate
    int rank = states[size_t(id)].rank;
    while (rank < n && covered.contains(order[size_t(rank)])) ++rank;
    if (rank >= n) {
      goal = id;
      break;
    }
    const int first = order[size_t(rank)];
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
        StateKey next{covered | inside, track ? states[size_t(id)].key.frontier : FrontierState{}};
        Crossings step;   // crossings caused by adding c (none on one device without boundary prices)
        if (track) step = add_candidate_crossings(problem, covered, c, next.frontier);
        Cost next_cost = states[size_t(id)].cost + problem.costs[size_t(c)] + step.transfer + step.boundary;
        Cost transfer = states[size_t(id)].transfer + step.transfer;
        Cost boundary = states[size_t(id)].boundary + step.boundary;
        if (prune && dominated(next, next_cost, -1)) continue;
        double& cs = covers_share[size_t(c)];
        if (cs < 0) {
          cs = 0.0;
          inside.for_each([&](int u) { cs += share[size_t(u)]; });
        }
        const double next_h = std::max(0.0, states[size_t(id)].h - cs);
        int target = int(states.size());
        bool inserted = false;
        if (beam) {
          auto [it, fresh] = by_cover.emplace(next.covered, target);
          std::tie(target, inserted) = std::pair{it->second, fresh};
        } else {
          auto [it, fresh] = ids.emplace(next, target);
          std::tie(target, inserted) = std::pair{it->second, fresh};
        }
        const size_t bytes =
            inserted ? 2 * (next.covered.memory_bytes() + next.frontier.capacity() * sizeof(FrontierEntry)) + kNodeBytes : 0;
        const size_t rep_bytes = prune ? next.covered.memory_bytes() + kNodeBytes + 4 * sizeof(int) : 0;   // keep_rep's
        if (options.memory_budget && held_with(inserted, bytes + rep_bytes) > options.memory_budget) {
          result.out_of_memory = true;
          break;
        }
        if (inserted) {
          key_bytes += bytes;
          states.push_back({std::move(next), next_cost, transfer, boundary, id, c, false, rank, next_h});
        } else {
          State& s = states[size_t(target)];
          if (s.settled || !(next_cost < s.cost)) continue;
          if (beam) s.key.frontier = std::move(next.frontier);   // the cheaper path's frontier
          s.cost = next_cost;
          s.transfer = transfer;
          s.boundary = boundary;
          s.parent = id;
          s.via = c;
          s.rank = rank;
        }
        if (prune) keep_rep(target);
        heap.push({next_cost.number() + states[size_t(target)].h, next_cost.number(), target});
        ++result.stats.pushed;
      }
      if (result.out_of_memory) break;
    }
    result.stats.peak_bytes = std::max<int64_t>(result.stats.peak_bytes, int64_t(held()));
    if (result.out_of_memory) break;
  }
  result.stats.peak_bytes = std::max<int64_t>(result.stats.peak_bytes, int64_t(held()));
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
