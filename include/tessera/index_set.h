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
// Trade-off: a dense bitset costs n/8 bytes per set (128 bytes for a 1,000-node graph) even for
// a one-node candidate, but every operation is a short loop without branches or allocation
// beyond the word vector, and hashing and ordering are trivial. Sparse sets would win only on
// graphs far larger than the ~10^4 nodes tessera targets.
//
// Span. The set also keeps a word range [lo, hi) outside which every word is zero (it may be
// loose inside: erase() does not shrink it). A candidate of a few nodes in a 10,000-node graph
// spans a word or two, so union, intersection, comparison, hashing and iteration run over its
// span, not the universe; only storage and copies stay n/8 bytes.
//
// The universe size travels with the set; binary operations require equal sizes (an internal
// invariant). hash() is stable across runs and machines (FNV-1a over the words), so it may key
// persistent data; std::hash is never used.
//
// Total order (operator<=>): lexicographic on the ascending element sequences, so {0,1} < {0,2}
// < {1} and a proper prefix sorts first ({0} < {0,1}). Sets of different universe sizes order
// by size first. The order is independent of hashing and of insertion history.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tessera {

class IndexSet {
 public:
  IndexSet() = default;
  explicit IndexSet(int size);                            // empty set over `size` indices
  IndexSet(int size, std::initializer_list<int> members);
  static IndexSet all(int size);                          // {0, ..., size-1}
  static IndexSet single(int size, int index);
  IndexSet(const IndexSet&) = default;
  IndexSet& operator=(const IndexSet&) = default;
  // A moved-from set is empty with no words: its span must say so too.
  IndexSet(IndexSet&& o) noexcept : size_(o.size_), words_(std::move(o.words_)), lo_(o.lo_), hi_(o.hi_) { o.lo_ = o.hi_ = 0; }
  IndexSet& operator=(IndexSet&& o) noexcept {
    if (this == &o) return *this;
    size_ = o.size_;
    words_ = std::move(o.words_);
    lo_ = o.lo_;
    hi_ = o.hi_;
    o.lo_ = o.hi_ = 0;
    return *this;
  }

  int size() const { return size_; }                      // universe size, not the count
  int count() const;                                      // number of members
  bool empty() const;
  bool contains(int i) const {
    return (words_[static_cast<size_t>(i) >> 6] >> (static_cast<unsigned>(i) & 63u)) & 1u;
  }
  bool operator[](int i) const { return contains(i); }

  void insert(int i) {
    const uint32_t w = static_cast<uint32_t>(i) >> 6;
    words_[w] |= uint64_t{1} << (static_cast<unsigned>(i) & 63u);
    if (lo_ == hi_) {
      lo_ = w;
      hi_ = w + 1;
    } else {
      lo_ = std::min(lo_, w);
      hi_ = std::max(hi_, w + 1);
    }
  }
  void erase(int i) { words_[static_cast<size_t>(i) >> 6] &= ~(uint64_t{1} << (static_cast<unsigned>(i) & 63u)); }
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
    for (size_t w = lo_; w < hi_; ++w) {
      uint64_t bits = words_[w];
      while (bits) {
        f(static_cast<int>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
        bits &= bits - 1;
      }
    }
  }

  uint64_t hash() const;            // stable FNV-1a over size and words
  std::string to_string() const;    // "{0,3,4}"
  const std::vector<uint64_t>& words() const { return words_; }

  bool operator==(const IndexSet& o) const;
  std::strong_ordering operator<=>(const IndexSet& o) const;

  struct Hash {
    size_t operator()(const IndexSet& s) const { return static_cast<size_t>(s.hash()); }
  };

 private:
  int size_ = 0;
  std::vector<uint64_t> words_;     // bits at and above size_ are always zero
  uint32_t lo_ = 0, hi_ = 0;        // every nonzero word lies in [lo_, hi_); lo_ == hi_: none
};

}  // namespace tessera
