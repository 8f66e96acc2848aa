// IndexSet: word-at-a-time set algebra over each set's span (see include/tessera/index_set.h).
#include "tessera/index_set.h"

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

IndexSet::IndexSet(int size) : size_(size), words_(words_for(size), 0) {
  TESSERA_CHECK(size >= 0, "IndexSet: negative size");
}

IndexSet::IndexSet(int size, std::initializer_list<int> members) : IndexSet(size) {
  for (int m : members) {
    TESSERA_CHECK(m >= 0 && m < size, "IndexSet: member out of range");
    insert(m);
  }
}

IndexSet IndexSet::all(int size) {
  IndexSet s(size);
  for (auto& w : s.words_) w = ~uint64_t{0};
  if (size % 64 != 0 && !s.words_.empty()) s.words_.back() = (uint64_t{1} << (size % 64)) - 1;
  s.lo_ = 0;
  s.hi_ = static_cast<uint32_t>(s.words_.size());
  return s;
}

IndexSet IndexSet::single(int size, int index) {
  IndexSet s(size);
  s.insert(index);
  return s;
}

int IndexSet::count() const {
  int n = 0;
  for (size_t w = lo_; w < hi_; ++w) n += std::popcount(words_[w]);
  return n;
}

bool IndexSet::empty() const {
  for (size_t w = lo_; w < hi_; ++w)
    if (words_[w]) return false;
  return true;
}

void IndexSet::clear() {
  for (size_t w = lo_; w < hi_; ++w) words_[w] = 0;
  lo_ = hi_ = 0;
}

IndexSet& IndexSet::operator|=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  if (o.lo_ == o.hi_) return *this;
  for (size_t i = o.lo_; i < o.hi_; ++i) words_[i] |= o.words_[i];
  if (lo_ == hi_) {
    lo_ = o.lo_;
    hi_ = o.hi_;
  } else {
    lo_ = std::min(lo_, o.lo_);
    hi_ = std::max(hi_, o.hi_);
  }
  return *this;
}

IndexSet& IndexSet::operator&=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  const uint32_t lo = std::max(lo_, o.lo_), hi = std::min(hi_, o.hi_);
  for (size_t i = lo_; i < hi_; ++i) words_[i] = i >= lo && i < hi ? words_[i] & o.words_[i] : 0;
  if (lo < hi) {
    lo_ = lo;
    hi_ = hi;
  } else {
    lo_ = hi_ = 0;
  }
  return *this;
}

IndexSet& IndexSet::operator-=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  const uint32_t lo = std::max(lo_, o.lo_), hi = std::min(hi_, o.hi_);
  for (size_t i = lo; i < hi; ++i) words_[i] &= ~o.words_[i];
  return *this;
}

IndexSet IndexSet::complement() const { return all(size_) - *this; }

bool IndexSet::intersects(const IndexSet& o) const {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  const uint32_t lo = std::max(lo_, o.lo_), hi = std::min(hi_, o.hi_);
  for (size_t i = lo; i < hi; ++i)
    if (words_[i] & o.words_[i]) return true;
  return false;
}

bool IndexSet::is_subset_of(const IndexSet& o) const {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  for (size_t i = lo_; i < hi_; ++i)
    if (words_[i] & ~o.words_[i]) return false;
  return true;
}

bool IndexSet::and3_within(const IndexSet& a, const IndexSet& b, const IndexSet& c) const {
  TESSERA_CHECK(size_ == a.size_ && size_ == b.size_ && size_ == c.size_, "IndexSet: size mismatch");
  const uint32_t lo = std::max({a.lo_, b.lo_, c.lo_}), hi = std::min({a.hi_, b.hi_, c.hi_});
  for (size_t i = lo; i < hi; ++i)
    if (a.words_[i] & b.words_[i] & c.words_[i] & ~words_[i]) return false;
  return true;
}

int IndexSet::first() const { return next(-1); }

int IndexSet::next(int after) const {
  int start = after + 1;
  if (start >= size_) return -1;
  size_t w = static_cast<size_t>(start) >> 6;
  if (w >= hi_) return -1;
  uint64_t bits = w < lo_ ? 0 : words_[w] & (~uint64_t{0} << (static_cast<unsigned>(start) & 63u));
  if (w < lo_) {
    w = lo_;
    bits = words_[w];
  }
  while (true) {
    if (bits) return static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
    if (++w >= hi_) return -1;
    bits = words_[w];
  }
}

int IndexSet::first_unset() const {
  for (size_t w = 0; w < words_.size(); ++w) {
    if (~words_[w]) {
      int i = static_cast<int>(w * 64 + static_cast<size_t>(std::countr_one(words_[w])));
      return i < size_ ? i : size_;
    }
  }
  return size_;
}

int IndexSet::last() const {
  for (size_t w = hi_; w-- > lo_;)
    if (words_[w]) return static_cast<int>(w * 64 + 63 - static_cast<size_t>(std::countl_zero(words_[w])));
  return -1;
}

std::vector<int> IndexSet::members() const {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(count()));
  for_each([&](int i) { out.push_back(i); });
  return out;
}

// FNV-1a over the size and every word, as ever (stable across runs: it may key persistent data);
// the zero words outside the span are skipped arithmetically.
uint64_t IndexSet::hash() const {
  uint64_t h = 1469598103934665603ull;   // FNV-1a offset basis
  auto mix = [&h](uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xff;
      h *= kFnvPrime;
    }
  };
  mix(static_cast<uint64_t>(size_));
  const size_t lo = lo_ < hi_ ? lo_ : words_.size(), hi = lo_ < hi_ ? hi_ : words_.size();
  h = skip_zero_words(h, lo);
  for (size_t w = lo; w < hi; ++w) mix(words_[w]);
  return skip_zero_words(h, words_.size() - hi);
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

bool IndexSet::operator==(const IndexSet& o) const {
  if (size_ != o.size_) return false;
  const size_t lo = std::min(lo_ < hi_ ? lo_ : o.lo_, o.lo_ < o.hi_ ? o.lo_ : lo_);
  const size_t hi = std::max(hi_, o.hi_);
  for (size_t w = lo; w < hi; ++w)
    if (words_[w] != o.words_[w]) return false;
  return true;
}

// Lexicographic on ascending members. At the lowest index where the sets differ, the set holding
// it sorts first unless the other set has no member above that index (then the other is a proper
// prefix and sorts first). Words outside both spans are zero in both.
std::strong_ordering IndexSet::operator<=>(const IndexSet& o) const {
  if (size_ != o.size_) return size_ <=> o.size_;
  const size_t lo = std::min(lo_ < hi_ ? lo_ : o.lo_, o.lo_ < o.hi_ ? o.lo_ : lo_);
  const size_t hi = std::max(hi_, o.hi_);
  for (size_t w = lo; w < hi; ++w) {
    uint64_t diff = words_[w] ^ o.words_[w];
    if (!diff) continue;
    int bit = static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(diff)));
    bool mine = contains(bit);
    const IndexSet& other = mine ? o : *this;
    bool other_continues = other.next(bit) != -1;
    if (mine) return other_continues ? std::strong_ordering::less : std::strong_ordering::greater;
    return other_continues ? std::strong_ordering::greater : std::strong_ordering::less;
  }
  return std::strong_ordering::equal;
}

}  // namespace tessera
