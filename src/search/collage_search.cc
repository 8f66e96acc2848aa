#include "search/collage_search.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>

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

// The search as a sequence of named steps over its state: the states met so far (exact: one per
// (covered set, frontier); beam: one per covered set), the queue, the dominance table, and the
// estimate of the memory they hold.
class CollageSearch {
 public:
  CollageSearch(const SearchProblem& problem, const CollageOptions& options)
      : problem_(problem),
        options_(options),
        n_(problem.num_nodes()),
        order_(late_order(*problem.index)),
        track_(problem.tracks_crossings() && !options.ignore_crossings),
        beam_(options.one_state_per_cover && track_),
        prune_(track_ && !beam_ && !problem.multi_device()),
        heap_(Worse{&states_}),
        covers_share_(problem.candidates.size(), -1.0),
        stamp_(problem.candidates.size(), -1),
        in_closure_(n_) {}

  SearchResult run() {
    find_external_producers();
    find_node_shares();
    push_start();
    const int goal = settle_until_goal();
    result_.stats.peak_bytes = std::max<int64_t>(result_.stats.peak_bytes, int64_t(held()));
    if (goal >= 0) read_plan(goal);
    return std::move(result_);
  }

 private:
  // std::priority_queue pops the "largest": the lowest f, ties by state key.
  struct Worse {
    const std::vector<State>* states;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.f != b.f) return a.f > b.f;
      return (*states)[size_t(a.id)].key > (*states)[size_t(b.id)].key;
    }
  };
  // Memory held, estimated: the state records (their vector's capacity), per state its key twice
  // (the record's and the table's copy: the covered set's words, the frontier's entries) and a
  // hash node, per covered set in the dominance table its key and list, and the queue's entries
  // (twice: its vector grows by doubling). Allocator overheads make the real figure somewhat larger.
  static constexpr size_t kNodeBytes = 64;
  static constexpr size_t kReps = 4;   // states kept per covered set for dominance

  bool allowed(int c) const { return problem_.usable(c) && (options_.allowed.empty() || options_.allowed[size_t(c)]); }

  // Q(v): external producers of every allowed candidate containing v.
  void find_external_producers() {
    q_.assign(static_cast<size_t>(n_), IndexSet(n_));
    for (int v = 0; v < n_; ++v)
      for (int c : problem_.by_node[size_t(v)])
        if (allowed(c)) q_[size_t(v)] |= problem_.ext[size_t(c)];
  }

  // The A* estimate (collage_search.h): each node's cheapest share of an allowed candidate holding
  // it, cost / size, a hair under (float sums of shares must not pass the cost they split); a
  // state's estimate is the shares of its uncovered nodes, a candidate's the shares it covers.
  void find_node_shares() {
    share_ = node_shares(problem_, options_.allowed);
    for (double& s : share_) s *= 1.0 - 1e-9;
  }

  // The shares candidate c covers, computed when first met.
  double covers_share(int c) {
    double& cs = covers_share_[size_t(c)];
    if (cs < 0) {
      cs = 0.0;
      problem_.candidates[size_t(c)].inside().for_each([&](int u) { cs += share_[size_t(u)]; });
    }
    return cs;
  }

  void push_start() {
    StateKey start{options_.initial.size() == n_ ? options_.initial : IndexSet(n_), {}};
    double start_h = 0.0;
    for (int v = 0; v < n_; ++v)
      if (!start.covered.contains(v)) start_h += share_[size_t(v)];
    states_.push_back({start, Cost::zero(), Cost::zero(), Cost::zero(), -1, -1, false, 0, start_h});
    if (beam_)
      by_cover_.emplace(start.covered, 0);
    else
      ids_.emplace(start, 0);
    heap_.push({start_h, 0.0, 0});
    ++result_.stats.pushed;
  }

  // Pops and settles states in cost order, expanding each, until one covers every node (its id)
  // or the queue runs dry or out of memory (-1).
  int settle_until_goal() {
    while (!heap_.empty()) {
      const int id = pop_live();
      if (id < 0) continue;
      const IndexSet covered = states_[size_t(id)].key.covered;   // copy: states_ may reallocate
      const int rank = next_rank(id, covered);
      if (rank >= n_) return id;
      expand(id, rank, covered);
      result_.stats.peak_bytes = std::max<int64_t>(result_.stats.peak_bytes, int64_t(held()));
      if (result_.out_of_memory) break;
    }
    return -1;
  }

  // The queue's next entry, settled; -1 when it is stale (a cheaper path came after it), already
  // settled, or dominated.
  int pop_live() {
    const auto [f, g, id] = heap_.top();
    heap_.pop();
    ++result_.stats.popped;
    State& s = states_[size_t(id)];
    if (s.settled || g != s.cost.number()) return -1;
    if (prune_ && dominated(s.key, s.cost, id)) return -1;
    s.settled = true;
    ++result_.stats.states;
    return id;
  }

  // The rank in order_ of the first node state `id` leaves uncovered (n_: none).
  int next_rank(int id, const IndexSet& covered) const {
    int rank = states_[size_t(id)].rank;
    while (rank < n_ && covered.contains(order_[size_t(rank)])) ++rank;
    return rank;
  }

  // N*: the closure of {first} under v -> Q(v) \ covered, sorted.
  const std::vector<int>& closure(int first, const IndexSet& covered) {
    in_closure_.clear();
    in_closure_.insert(first);
    work_.assign(1, first);
    for (size_t w = 0; w < work_.size(); ++w) {
      (q_[size_t(work_[w])] - covered - in_closure_).for_each([&](int u) {
        in_closure_.insert(u);
        work_.push_back(u);
      });
    }
    std::sort(work_.begin(), work_.end());
    return work_;
  }

  // Adds every allowed candidate that holds a node of N* and fits state `id` (each once).
  void expand(int id, int rank, const IndexSet& covered) {
    for (int v : closure(order_[size_t(rank)], covered))
      for (int c : problem_.by_node[size_t(v)]) {
        if (stamp_[size_t(c)] == id || !allowed(c)) continue;
        stamp_[size_t(c)] = id;
        if (!add_candidate(id, rank, covered, c)) return;   // out of memory
      }
  }

  // The state reached from `id` by adding candidate c, recorded or improved, and queued; false when
  // that would pass the memory budget.
  bool add_candidate(int id, int rank, const IndexSet& covered, int c) {
    const IndexSet& inside = problem_.candidates[size_t(c)].inside();
    if (inside.intersects(covered) || !problem_.ext[size_t(c)].is_subset_of(covered)) return true;
    StateKey next{covered | inside, track_ ? states_[size_t(id)].key.frontier : FrontierState{}};
    Crossings step;   // crossings caused by adding c (none on one device without boundary prices)
    if (track_) step = add_candidate_crossings(problem_, covered, c, next.frontier);
    const State& from = states_[size_t(id)];
    Cost next_cost = from.cost + problem_.costs[size_t(c)] + step.transfer + step.boundary;
    Cost transfer = from.transfer + step.transfer;
    Cost boundary = from.boundary + step.boundary;
    if (prune_ && dominated(next, next_cost, -1)) return true;
    const double next_h = std::max(0.0, from.h - covers_share(c));
    const auto [target, inserted] = find_or_add_id(next);
    const size_t bytes =
        inserted ? 2 * (next.covered.memory_bytes() + next.frontier.capacity() * sizeof(FrontierEntry)) + kNodeBytes : 0;
    const size_t rep_bytes = prune_ ? next.covered.memory_bytes() + kNodeBytes + 4 * sizeof(int) : 0;   // keep_rep's
    if (options_.memory_budget && held_with(inserted, bytes + rep_bytes) > options_.memory_budget) {
      result_.out_of_memory = true;
      return false;
    }
    if (inserted) {
      key_bytes_ += bytes;
      states_.push_back({std::move(next), next_cost, transfer, boundary, id, c, false, rank, next_h});
    } else {
      State& s = states_[size_t(target)];
      if (s.settled || !(next_cost < s.cost)) return true;
      if (beam_) s.key.frontier = std::move(next.frontier);   // the cheaper path's frontier
      s.cost = next_cost;
      s.transfer = transfer;
      s.boundary = boundary;
      s.parent = id;
      s.via = c;
      s.rank = rank;
    }
    if (prune_) keep_rep(target);
    heap_.push({next_cost.number() + states_[size_t(target)].h, next_cost.number(), target});
    ++result_.stats.pushed;
    return true;
  }

  // The id of `key`'s state (exact: per key; beam: per covered set), and whether it is new: then
  // it is the next id, states_.size(), to be pushed by the caller.
  std::pair<int, bool> find_or_add_id(const StateKey& key) {
    const int next_id = int(states_.size());
    if (beam_) {
      auto [it, fresh] = by_cover_.emplace(key.covered, next_id);
      return {it->second, fresh};
    }
    auto [it, fresh] = ids_.emplace(key, next_id);
    return {it->second, fresh};
  }

  size_t held() const { return states_.capacity() * sizeof(State) + key_bytes_ + 2 * heap_.size() * sizeof(Entry); }
  // What held() becomes after one more push, and one more state with a key of `bytes` when
  // `grows` (the states' vector may double).
  size_t held_with(bool grows, size_t bytes) const {
    size_t cap = states_.capacity();
    if (grows && states_.size() == cap) cap = std::max<size_t>(16, 2 * cap);
    return cap * sizeof(State) + key_bytes_ + bytes + 2 * (heap_.size() + 1) * sizeof(Entry);
  }

  // Dominance (states with crossings, one device). Two states with one covered set have the same
  // live values and can be completed by exactly the same candidates; only their frontier entries
  // (who produced a value, where it was handed) can make a completion cost more for one than for
  // the other, and by at most what the entries that differ can still be charged (entry_bound). So
  // a state is dropped when it costs more than a kept state of its covered set plus that bound:
  // it can never lead to a cheaper plan. Each covered set keeps its few cheapest states (reps_).

  // What entry e of a state over `covered` may still be charged: at most one price per backend
  // that may still read it and has not had it handed, and at most one per reader left.
  Cost entry_bound(const IndexSet& covered, const FrontierEntry& e) const {
    size_t left = 0;
    uint32_t reach = 0;
    for (NodeId r : problem_.index->value_consumers()[size_t(e.value)])
      if (!covered.contains(r)) {
        ++left;
        reach |= problem_.node_backends[size_t(r)];
      }
    Cost sum = Cost::zero(), most = Cost::zero();
    for (uint32_t open = reach & ~e.handed; open; open &= open - 1) {
      const Cost& p = problem_.boundary_price(e.value, e.backend, std::countr_zero(open));
      sum += p;
      if (most < p) most = p;
    }
    Cost by_readers = Cost::zero();
    for (size_t i = 0; i < left && by_readers < sum; ++i) by_readers += most;
    return by_readers < sum ? by_readers : sum;
  }

  // A state is dominated by a cheaper kept state R of its covered set when R's cost plus what R's
  // entries that it does not share may still be charged is below its own cost (an entry it lacks
  // costs R nothing: frontier entries exist only while a charge is possible).
  bool dominated(const StateKey& key, const Cost& cost, int self) const {
    auto it = reps_.find(key.covered);
    if (it == reps_.end()) return false;
    for (int r : it->second) {
      if (r == self) continue;
      const State& rep = states_[size_t(r)];
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
  }

  void keep_rep(int id) {
    auto [slot, fresh] = reps_.try_emplace(states_[size_t(id)].key.covered);
    if (fresh) key_bytes_ += slot->first.memory_bytes() + kNodeBytes + 4 * sizeof(int);
    std::vector<int>& v = slot->second;
    if (std::find(v.begin(), v.end(), id) != v.end()) return;
    if (v.size() < kReps) {
      v.push_back(id);
      return;
    }
    auto worst = std::max_element(v.begin(), v.end(), [&](int x, int y) { return states_[size_t(x)].cost < states_[size_t(y)].cost; });
    if (states_[size_t(id)].cost < states_[size_t(*worst)].cost) *worst = id;
  }

  // The goal's cost, and the candidates on its path, sorted.
  void read_plan(int goal) {
    result_.found = true;
    result_.total = states_[size_t(goal)].cost;
    result_.transfer = states_[size_t(goal)].transfer;
    result_.boundary = states_[size_t(goal)].boundary;
    for (int s = goal; states_[size_t(s)].parent >= 0; s = states_[size_t(s)].parent)
      result_.chosen.push_back(states_[size_t(s)].via);
    std::sort(result_.chosen.begin(), result_.chosen.end());
  }

  const SearchProblem& problem_;
  const CollageOptions& options_;
  const int n_;
  const std::vector<int> order_;   // late_order
  const bool track_;               // states carry frontiers: crossings are priced
  const bool beam_;                // one state per covered set (CollageOptions::one_state_per_cover)
  const bool prune_;               // dominance between states of one covered set
  std::vector<IndexSet> q_;
  std::vector<double> share_;
  std::vector<State> states_;
  std::unordered_map<StateKey, int, StateKeyHash> ids_;          // exact: state per key
  std::unordered_map<IndexSet, int, IndexSet::Hash> by_cover_;   // beam: state per covered set
  std::priority_queue<Entry, std::vector<Entry>, Worse> heap_;
  std::unordered_map<IndexSet, std::vector<int>, IndexSet::Hash> reps_;
  std::vector<double> covers_share_;
  size_t key_bytes_ = 0;
  std::vector<int> stamp_;   // per candidate, the last state that expanded it
  std::vector<int> work_;
  IndexSet in_closure_;
  SearchResult result_;
};

}  // namespace

SearchResult collage_search(const SearchProblem& problem, const CollageOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  SearchResult result = CollageSearch(problem, options).run();
  result.stats.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace tessera
