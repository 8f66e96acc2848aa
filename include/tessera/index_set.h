// IndexSet: a set of nodes of one Graph, as a bitset over the post-order node index.
//
// The post-order index of a node is its position in Graph::nodes (nodes are stored in a
// topological order, producers first). Every candidate partition, every search state and every
// reachability fact is an IndexSet over that index, so set algebra is word-at-a-time:
//
//   inside   = {2,3,5}          words[0] = 0b101100
//   entries  = inside & has_outside_input        (one AND per 64 nodes)
//   convex   = ((down | ...) & up & ~inside) == 0
//
// Window. A set stores only the words from its first to its last member's (base word + a
// vector), and every word outside that window is zero. A candidate of a few nodes in a
// 10,000-node graph holds a word or two, so storage, copies, union, intersection, comparison,
// hashing and iteration follow the set's span, not the graph's size (a dense bitset made the
// candidates of a 216-layer encoder take 1.3 KB per set, several per candidate, and every
// operation a 165-word loop). Sets that do span the graph (reachability, search states) cost
// what a dense bitset costs. The window may be loose (erase() does not shrink it).
//
// The universe size travels with the set; binary operations require equal sizes (an internal
// invariant). hash() is stable across runs and machines (FNV-1a over the words), so it may key
// persistent data; fast_hash() (IndexSet::Hash) is for in-memory tables; std::hash is never used.
//
// Total order (operator<=>): lexicographic on the ascending element sequences, so {0,1} < {0,2}
// < {1} and a proper prefix sorts first ({0} < {0,1}). Sets of different universe sizes order
// by size first. The order is independent of hashing and of insertion history.
#pragma once

#include <compare>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

class IndexSet {
 public:
  IndexSet() = default;
  explicit IndexSet(int size);                            // empty set over `size` indices
  IndexSet(int size, std::initializer_list<int> members);
  static IndexSet all(int size);                          // {0, ..., size-1}
  static IndexSet single(int size, int index);
  int size() const { return size_; }                      // universe size, not the count
  int count() const;                                      // number of members
  bool empty() const;
  bool contains(int i) const { return (word(static_cast<size_t>(i) >> 6) >> (static_cast<unsigned>(i) & 63u)) & 1u; }
  bool operator[](int i) const { return contains(i); }

  void insert(int i);
  void erase(int i) {
    const size_t w = static_cast<size_t>(i) >> 6;
    if (w >= base_ && w - base_ < words_.size()) words_[w - base_] &= ~(uint64_t{1} << (static_cast<unsigned>(i) & 63u));
  }
  void clear();

  IndexSet& operator|=(const IndexSet& o);
  IndexSet& operator&=(const IndexSet& o);
  IndexSet& operator-=(const IndexSet& o);               // difference
  friend IndexSet operator|(IndexSet a, const IndexSet& b) { return a |= b; }
  friend IndexSet operator&(IndexSet a, const IndexSet& b) { return a &= b; }
  friend IndexSet operator-(IndexSet a, const IndexSet& b) { return a -= b; }
  IndexSet complement() const;

  bool intersects(const IndexSet& o) const;
  bool disjoint(const IndexSet& o) const { return !intersects(o); }
  bool is_subset_of(const IndexSet& o) const;
  // (a & b & c) has no member outside `this`: the convexity test without temporaries.
  bool and3_within(const IndexSet& a, const IndexSet& b, const IndexSet& c) const;

  int first() const;                // smallest member, -1 if empty
  int next(int after) const;        // smallest member > after, -1 if none
  int first_unset() const;          // smallest non-member, size() if full
  int last() const;                 // largest member, -1 if empty
  std::vector<int> members() const; // ascending

  // Calls f(i) for every member in ascending order.
  template <typename F>
  void for_each(F&& f) const {
    for (size_t k = 0; k < words_.size(); ++k) {
      uint64_t bits = words_[k];
      while (bits) {
        f(static_cast<int>((base_ + k) * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
        bits &= bits - 1;
      }
    }
  }

  uint64_t hash() const;            // stable FNV-1a over size and words
  // For in-memory tables only (IndexSet::Hash, search states): a word-at-a-time mix of the
  // non-zero words and their positions, several times faster than hash() on sets that span the
  // graph. Deterministic, but not pinned: never let it key persistent data.
  uint64_t fast_hash() const;
  size_t memory_bytes() const { return words_.capacity() * sizeof(uint64_t); }   // heap words held
  std::string to_string() const;    // "{0,3,4}"
  // Word w of the dense bitset (0 outside the window).
  uint64_t word(size_t w) const { return w >= base_ && w - base_ < words_.size() ? words_[w - base_] : 0; }

  bool operator==(const IndexSet& o) const;
  std::strong_ordering operator<=>(const IndexSet& o) const;

  struct Hash {
    size_t operator()(const IndexSet& s) const { return static_cast<size_t>(s.fast_hash()); }
  };

 private:
  size_t end() const { return base_ + words_.size(); }   // one past the window's last word
  // Words [lo, hi) hold every member of this set and of o (an empty set's base does not count).
  std::pair<size_t, size_t> joint_window(const IndexSet& o) const;
  // Widens the window to hold words [lo, hi) (new words zero).
  void cover(size_t lo, size_t hi);

  int size_ = 0;
  size_t base_ = 0;                 // dense word index of words_[0]
  std::vector<uint64_t> words_;     // the window; bits at and above size_ are always zero
};

}  // namespace tessera
