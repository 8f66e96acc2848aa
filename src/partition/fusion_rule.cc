// FusionRule: the full closure of a rule's candidates under uniting touching candidates whose
// kinds allow it (docs/design.md; Collage's CombinePartitionRule without its depth pre-check).
//
// Worklist algorithm. Every member (seed or union) is processed once, in creation order; when
// member s is processed it is paired with every already-processed member t that holds a node on
// s's frontier (a direct producer or consumer of s outside s), found through by_node. Each
// adjacent pair is thus examined exactly once, when the later of the two is processed, so the
// result is the closure. A union is kept when: s and t are disjoint, the fusion style allows the
// direction(s) in which they feed each other, the union is convex, and its depth is within
// max_depth (sound pruning: depth never shrinks under union), and it holds no more nodes feeding
// graph outputs than max_exits (sound too: such a node is an exit of every member holding it).
// Every union ever examined, kept or not, goes into `seen`, so no union is tested twice.
//
// Convexity of u = s | t is one pass over the words between u's first and last node:
// (down_s|down_t) & (up_s|up_t) within u, where down(S) and up(S) are unions of the per-node
// reachability sets. A large member keeps them whole (two graph-sized bitsets); a small one, which
// most are (a 10,584-node encoder's 100k members have at most 11 nodes), ORs its nodes' words on
// demand, only over that span: keeping two graph-sized sets per small member was a third of the
// closure's time in allocation and copying.
#include <algorithm>
#include <unordered_set>

#include "tessera/error.h"
#include "partition/partition_rule.h"

namespace tessera {
namespace {

struct Member {
  IndexSet inside, down, up;   // down/up: kept only when whole_reach, else empty
  bool whole_reach = false;    // more than kWholeReachAbove nodes
  OpKind kind;
  int depth;
  std::vector<Composite> composites;
  const std::string* rule;
};

// Members with more nodes than this keep down(S) and up(S) whole.
constexpr int kWholeReachAbove = 32;

struct Key {
  IndexSet inside;
  std::vector<Composite> composites;
  bool operator==(const Key& o) const { return inside == o.inside && composites == o.composites; }
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = k.inside.fast_hash();   // in memory only
    for (const auto& c : k.composites) h = h * 1099511628211ull ^ c.inside.fast_hash();
    return static_cast<size_t>(h);
  }
};

// Word i of down(S) and up(S) for a member: its kept sets, or its nodes' reachability ORed.
std::pair<uint64_t, uint64_t> reach_word(const DataflowIndex& index, const Member& m, size_t i) {
  if (m.whole_reach) return {m.down.word(i), m.up.word(i)};
  uint64_t down = 0, up = 0;
  m.inside.for_each([&](NodeId x) {
    down |= index.downstream(x).word(i);
    up |= index.upstream(x).word(i);
  });
  return {down, up};
}

// A node both downstream and upstream of u lies strictly between u's first and last member, so
// only those words are tested: the cost follows the union's span, not the graph's size.
bool convex_union(const DataflowIndex& index, const Member& a, const Member& b, const IndexSet& u) {
  const size_t first = static_cast<size_t>(u.first()) / 64, last = static_cast<size_t>(u.last()) / 64;
  for (size_t i = first; i <= last; ++i) {
    const auto [a_down, a_up] = reach_word(index, a, i);
    const auto [b_down, b_up] = reach_word(index, b, i);
    if ((a_down | b_down) & (a_up | b_up) & ~u.word(i)) return false;
  }
  return true;
}

class Closure {
 public:
  Closure(const RuleContext& ctx, const FusionOptions& options, const std::string& rule_name)
      : ctx_(ctx), index_(ctx.index), options_(options), rule_name_(rule_name),
        by_node_(static_cast<size_t>(index_.size())), depth_(static_cast<size_t>(index_.size()), 0),
        output_nodes_(index_.size()) {
    for (NodeId n = 0; n < index_.size(); ++n)
      if (index_.feeds_graph_output(n)) output_nodes_.insert(n);
  }

  std::vector<Candidate> run(std::vector<Candidate> seeds) {
    // Seeds arrive sorted and deduplicated (PartitionRule::run), so seed i becomes member i.
    seeds_ = std::move(seeds);
    ctx_.stats.seeds += static_cast<int64_t>(seeds_.size());
    for (const auto& c : seeds_) {
      seen_.insert(Key{c.inside(), c.composites});
      members_.push_back(make_member(c));
    }
    for (size_t s = 0; s < members_.size(); ++s) {
      if (limited_) break;
      process(static_cast<int>(s));
    }
    std::vector<Candidate> out;
    out.reserve(members_.size());
    for (auto& m : members_)
      out.push_back(Candidate{SubGraph(index_, m.inside), ctx_.backend, *m.rule, std::move(m.composites)});
    return out;
  }

 private:
  Member make_member(const Candidate& c) {
    Member m{c.inside(), {}, {}, false, c.sub_graph.kind(), c.sub_graph.depth(), c.composites, &c.rule};
    keep_reach(m);
    return m;
  }

  // A large member's down(S) and up(S), kept whole (see the header).
  void keep_reach(Member& m) const {
    if (m.inside.count() <= kWholeReachAbove) return;
    m.whole_reach = true;
    m.down = m.up = IndexSet(index_.size());
    m.inside.for_each([&](NodeId i) {
      m.down |= index_.downstream(i);
      m.up |= index_.upstream(i);
    });
  }

  int union_depth(const IndexSet& u) {
    int best = 0;
    u.for_each([&](NodeId i) {
      int d = 1;
      for (NodeId p : index_.producers(i))
        if (u.contains(p)) d = std::max(d, depth_[static_cast<size_t>(p)] + 1);
      depth_[static_cast<size_t>(i)] = d;
      best = std::max(best, d);
    });
    return best;
  }

  void process(int s_id) {
    const int n = index_.size();
    IndexSet cons(n), prods(n);
    members_[static_cast<size_t>(s_id)].inside.for_each([&](NodeId i) {
      cons |= index_.consumer_set(i);
      prods |= index_.producer_set(i);
    });
    const IndexSet& s_inside = members_[static_cast<size_t>(s_id)].inside;
    IndexSet frontier = (cons | prods) - s_inside;
    stamp_.resize(members_.size(), -1);
    std::vector<int> partners;
    frontier.for_each([&](NodeId f) {
      for (int t : by_node_[static_cast<size_t>(f)]) {
        if (stamp_[static_cast<size_t>(t)] == s_id) continue;
        stamp_[static_cast<size_t>(t)] = s_id;
        partners.push_back(t);
      }
    });
    for (int t : partners) {
      if (limited_) return;
      try_union(s_id, t, cons, prods);
    }
    // s becomes visible to later members only now: each pair is examined once.
    members_[static_cast<size_t>(s_id)].inside.for_each(
        [&](NodeId i) { by_node_[static_cast<size_t>(i)].push_back(s_id); });
  }

  void try_union(int s_id, int t_id, const IndexSet& s_cons, const IndexSet& s_prods) {
    const Member& s = members_[static_cast<size_t>(s_id)];
    const Member& t = members_[static_cast<size_t>(t_id)];
    if (s.inside.intersects(t.inside)) return;
    bool s_feeds_t = s_cons.intersects(t.inside);
    bool t_feeds_s = s_prods.intersects(t.inside);
    bool allowed = (s_feeds_t && fusion_allows(options_.style, s.kind, t.kind)) ||
                   (t_feeds_s && fusion_allows(options_.style, t.kind, s.kind));
    if (!allowed) return;
    ++ctx_.stats.unions_tried;
    if (options_.max_exits > 0 && (s.inside & output_nodes_).count() + (t.inside & output_nodes_).count() >
                                      options_.max_exits)
      return;
    Key key{s.inside | t.inside, {}};
    key.composites.reserve(s.composites.size() + t.composites.size());
    key.composites = s.composites;
    key.composites.insert(key.composites.end(), t.composites.begin(), t.composites.end());
    std::sort(key.composites.begin(), key.composites.end());
    if (static_cast<int64_t>(seen_.size()) >= 4 * options_.max_candidates) {
      limited_ = true;
      ctx_.stats.limits.push_back(ctx_.backend + ": fusion closure '" + rule_name_ + "' stopped after examining " +
                                  std::to_string(seen_.size()) +
                                  " unions (4 x max_candidates); larger unions were not enumerated");
      return;
    }
    auto [it, fresh] = seen_.insert(std::move(key));
    if (!fresh) return;
    const IndexSet& u = it->inside;
    if (!convex_union(index_, s, t, u)) return;
    int depth = union_depth(u);
    if (options_.max_depth > 0 && depth > options_.max_depth) return;
    if (static_cast<int64_t>(members_.size()) >= options_.max_candidates) {
      limited_ = true;
      ctx_.stats.limits.push_back(ctx_.backend + ": fusion closure '" + rule_name_ + "' stopped at " +
                                  std::to_string(options_.max_candidates) +
                                  " candidates (max_candidates); larger unions were not enumerated");
      return;
    }
    Member m{u, {}, {}, false, std::max(s.kind, t.kind), depth, it->composites, &rule_name_};
    keep_reach(m);
    members_.push_back(std::move(m));
  }

  const RuleContext& ctx_;
  const DataflowIndex& index_;
  const FusionOptions& options_;
  const std::string& rule_name_;
  std::vector<Member> members_;
  std::vector<Candidate> seeds_;
  std::unordered_set<Key, KeyHash> seen_;
  std::vector<std::vector<int>> by_node_;
  std::vector<int> depth_;
  IndexSet output_nodes_;      // nodes feeding a graph output
  std::vector<int> stamp_;
  bool limited_ = false;
};

class FusionRule final : public PartitionRule {
 public:
  FusionRule(std::string name, PartitionRulePtr seeds, FusionOptions options)
      : PartitionRule(std::move(name)), seeds_(std::move(seeds)), options_(options) {}

  std::string describe() const override {
    return std::string("Fusion[") + fusion_style_name(options_.style) + ", max_depth " +
           std::to_string(options_.max_depth) + "](" + seeds_->describe() + ")";
  }

 protected:
  std::vector<Candidate> run_impl(const RuleContext& ctx) const override {
    std::vector<Candidate> seeds = seeds_->run(ctx);
    if (options_.style == FusionStyle::None) return seeds;
    return Closure(ctx, options_, name()).run(std::move(seeds));
  }

 private:
  PartitionRulePtr seeds_;
  FusionOptions options_;
};

}  // namespace

PartitionRulePtr make_fusion_rule(std::string name, PartitionRulePtr seeds, FusionOptions options) {
  return std::make_unique<FusionRule>(std::move(name), std::move(seeds), options);
}

}  // namespace tessera
