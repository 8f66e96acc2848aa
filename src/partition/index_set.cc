// IndexSet: word-at-a-time set algebra over each set's window (see include/tessera/index_set.h).
#include "tessera/index_set.h"

#include <algorithm>
#include <bit>

#include "tessera/error.h"

namespace tessera {
namespace {

size_t words_for(int size) { return (static_cast<size_t>(size) + 63) / 64; }

constexpr uint64_t kFnvPrime = 1099511628211ull;

// FNV-1a's state after mixing `words` zero words: each zero byte only multiplies by the prime.
uint64_t skip_zero_words(uint64_t h, size_t words) {
  uint64_t factor = 1, base = kFnvPrime;
  for (uint64_t e = uint64_t{8} * words; e; e >>= 1, base *= base)
    if (e & 1) factor *= base;
  return h * factor;
}

}  // namespace

IndexSet::IndexSet(int size) : size_(size) { TESSERA_CHECK(size >= 0, "IndexSet: negative size"); }

IndexSet::IndexSet(int size, std::initializer_list<int> members) : IndexSet(size) {
  for (int m : members) {
    TESSERA_CHECK(m >= 0 && m < size, "IndexSet: member out of range");
    insert(m);
  }
}

IndexSet IndexSet::all(int size) {
  IndexSet s(size);
  s.words_.assign(words_for(size), ~uint64_t{0});
  if (size % 64 != 0 && !s.words_.empty()) s.words_.back() = (uint64_t{1} << (size % 64)) - 1;
  return s;
}

IndexSet IndexSet::single(int size, int index) {
  IndexSet s(size);
  s.insert(index);
  return s;
}

void IndexSet::cover(size_t lo, size_t hi) {
  if (words_.empty()) {
    base_ = lo;
    words_.assign(hi - lo, 0);
    return;
  }
  if (lo < base_) {
    words_.insert(words_.begin(), base_ - lo, 0);
    base_ = lo;
  }
  if (hi > end()) words_.resize(hi - base_, 0);
}

void IndexSet::insert(int i) {
  const size_t w = static_cast<size_t>(i) >> 6;
  cover(w, w + 1);
  words_[w - base_] |= uint64_t{1} << (static_cast<unsigned>(i) & 63u);
}

int IndexSet::count() const {
  int n = 0;
  for (uint64_t w : words_) n += std::popcount(w);
  return n;
}

bool IndexSet::empty() const {
  for (uint64_t w : words_)
    if (w) return false;
  return true;
}

void IndexSet::clear() {
  words_.clear();
  base_ = 0;
}

IndexSet& IndexSet::operator|=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  if (o.words_.empty()) return *this;
  cover(o.base_, o.end());
  uint64_t* to = words_.data() + (o.base_ - base_);
  for (size_t k = 0; k < o.words_.size(); ++k) to[k] |= o.words_[k];
  return *this;
}

IndexSet& IndexSet::operator&=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  const size_t lo = std::max(base_, o.base_), hi = std::min(end(), o.end());
  if (lo >= hi) {
    clear();
    return *this;
  }
  std::vector<uint64_t> kept(hi - lo);
  for (size_t w = lo; w < hi; ++w) kept[w - lo] = words_[w - base_] & o.words_[w - o.base_];
  words_ = std::move(kept);
  base_ = lo;
  return *this;
}

IndexSet& IndexSet::operator-=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  const size_t lo = std::max(base_, o.base_), hi = std::min(end(), o.end());
  for (size_t w = lo; w < hi; ++w) words_[w - base_] &= ~o.words_[w - o.base_];
  return *this;
}

IndexSet IndexSet::complement() const { return all(size_) - *this; }

bool IndexSet::intersects(const IndexSet& o) const {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  const size_t lo = std::max(base_, o.base_), hi = std::min(end(), o.end());
  for (size_t w = lo; w < hi; ++w)
    if (words_[w - base_] & o.words_[w - o.base_]) return true;
  return false;
}

bool IndexSet::is_subset_of(const IndexSet& o) const {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  for (size_t k = 0; k < words_.size(); ++k)
    if (words_[k] & ~o.word(base_ + k)) return false;
  return true;
}

bool IndexSet::and3_within(const IndexSet& a, const IndexSet& b, const IndexSet& c) const {
  TESSERA_CHECK(size_ == a.size_ && size_ == b.size_ && size_ == c.size_, "IndexSet: size mismatch");
  const size_t lo = std::max({a.base_, b.base_, c.base_}), hi = std::min({a.end(), b.end(), c.end()});
  for (size_t w = lo; w < hi; ++w)
    if (a.words_[w - a.base_] & b.words_[w - b.base_] & c.words_[w - c.base_] & ~word(w)) return false;
  return true;
}

int IndexSet::first() const { return next(-1); }

int IndexSet::next(int after) const {
  const int start = after + 1;
  if (start >= size_ || words_.empty()) return -1;
  size_t w = static_cast<size_t>(start) >> 6;
  if (w >= end()) return -1;
  uint64_t bits;
  if (w < base_) {
    w = base_;
    bits = words_[0];
  } else {
    bits = words_[w - base_] & (~uint64_t{0} << (static_cast<unsigned>(start) & 63u));
  }
  while (true) {
    if (bits) return static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
    if (++w >= end()) return -1;
    bits = words_[w - base_];
  }
}

int IndexSet::first_unset() const {
  const size_t n = words_for(size_);
  for (size_t w = 0; w < n; ++w) {
    const uint64_t bits = word(w);
    if (~bits) {
      const int i = static_cast<int>(w * 64 + static_cast<size_t>(std::countr_one(bits)));
      return i < size_ ? i : size_;
    }
  }
  return size_;
}

int IndexSet::last() const {
  for (size_t k = words_.size(); k-- > 0;)
    if (words_[k]) return static_cast<int>((base_ + k) * 64 + 63 - static_cast<size_t>(std::countl_zero(words_[k])));
  return -1;
}

std::vector<int> IndexSet::members() const {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(count()));
  for_each([&](int i) { out.push_back(i); });
  return out;
}

// FNV-1a over the size and every word of the dense bitset, as ever (stable across runs: it may
// key persistent data); the zero words outside the window are skipped arithmetically.
uint64_t IndexSet::hash() const {
  uint64_t h = 1469598103934665603ull;   // FNV-1a offset basis
  auto mix = [&h](uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xff;
      h *= kFnvPrime;
    }
  };
  mix(static_cast<uint64_t>(size_));
  const size_t n = words_for(size_);
  if (words_.empty()) return skip_zero_words(h, n);
  h = skip_zero_words(h, base_);
  for (uint64_t w : words_) mix(w);
  return skip_zero_words(h, n - end());
}

uint64_t IndexSet::fast_hash() const {
  // Zero words are skipped, so a loose window hashes like a tight one (equal sets, equal hashes).
  uint64_t h = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(size_);
  for (size_t k = 0; k < words_.size(); ++k) {
    if (!words_[k]) continue;
    h ^= words_[k] + (base_ + k) * 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return h;
}

std::string IndexSet::to_string() const {
  std::string out = "{";
  bool first_member = true;
  for_each([&](int i) {
    if (!first_member) out += ",";
    out += std::to_string(i);
    first_member = false;
  });
  return out + "}";
}

std::pair<size_t, size_t> IndexSet::joint_window(const IndexSet& o) const {
  return {std::min(words_.empty() ? o.base_ : base_, o.words_.empty() ? base_ : o.base_), std::max(end(), o.end())};
}

bool IndexSet::operator==(const IndexSet& o) const {
  if (size_ != o.size_) return false;
  const auto [lo, hi] = joint_window(o);
  for (size_t w = lo; w < hi; ++w)
    if (word(w) != o.word(w)) return false;
  return true;
}

// Lexicographic on ascending members. At the lowest index where the sets differ, the set holding
// it sorts first unless the other set has no member above that index (then the other is a proper
// prefix and sorts first). Words outside both windows are zero in both.
std::strong_ordering IndexSet::operator<=>(const IndexSet& o) const {
  if (size_ != o.size_) return size_ <=> o.size_;
  const auto [lo, hi] = joint_window(o);
  for (size_t w = lo; w < hi; ++w) {
    const uint64_t diff = word(w) ^ o.word(w);
    if (!diff) continue;
    const int bit = static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(diff)));
    const bool mine = contains(bit);
    const IndexSet& other = mine ? o : *this;
    const bool other_continues = other.next(bit) != -1;
    if (mine) return other_continues ? std::strong_ordering::less : std::strong_ordering::greater;
    return other_continues ? std::strong_ordering::greater : std::strong_ordering::less;
  }
  return std::strong_ordering::equal;
}

}  // namespace tessera
