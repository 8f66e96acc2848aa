// IndexSet: word-at-a-time set algebra (see include/tessera/index_set.h).
#include "tessera/index_set.h"

#include <bit>

#include "tessera/error.h"

namespace tessera {
namespace {

size_t words_for(int size) { return (static_cast<size_t>(size) + 63) / 64; }

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
  return s;
}

IndexSet IndexSet::single(int size, int index) {
  IndexSet s(size);
  s.insert(index);
  return s;
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
  for (auto& w : words_) w = 0;
}

IndexSet& IndexSet::operator|=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  for (size_t i = 0; i < words_.size(); ++i) words_[i] |= o.words_[i];
  return *this;
}

IndexSet& IndexSet::operator&=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  for (size_t i = 0; i < words_.size(); ++i) words_[i] &= o.words_[i];
  return *this;
}

IndexSet& IndexSet::operator-=(const IndexSet& o) {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  for (size_t i = 0; i < words_.size(); ++i) words_[i] &= ~o.words_[i];
  return *this;
}

IndexSet IndexSet::complement() const { return all(size_) - *this; }

bool IndexSet::intersects(const IndexSet& o) const {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  for (size_t i = 0; i < words_.size(); ++i)
    if (words_[i] & o.words_[i]) return true;
  return false;
}

bool IndexSet::is_subset_of(const IndexSet& o) const {
  TESSERA_CHECK(size_ == o.size_, "IndexSet: size mismatch");
  for (size_t i = 0; i < words_.size(); ++i)
    if (words_[i] & ~o.words_[i]) return false;
  return true;
}

bool IndexSet::and3_within(const IndexSet& a, const IndexSet& b, const IndexSet& c) const {
  TESSERA_CHECK(size_ == a.size_ && size_ == b.size_ && size_ == c.size_, "IndexSet: size mismatch");
  for (size_t i = 0; i < words_.size(); ++i)
    if (a.words_[i] & b.words_[i] & c.words_[i] & ~words_[i]) return false;
  return true;
}

int IndexSet::first() const { return next(-1); }

int IndexSet::next(int after) const {
  int start = after + 1;
  if (start >= size_) return -1;
  size_t w = static_cast<size_t>(start) >> 6;
  uint64_t bits = words_[w] & (~uint64_t{0} << (static_cast<unsigned>(start) & 63u));
  while (true) {
    if (bits) return static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
    if (++w == words_.size()) return -1;
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
  for (size_t w = words_.size(); w-- > 0;)
    if (words_[w]) return static_cast<int>(w * 64 + 63 - static_cast<size_t>(std::countl_zero(words_[w])));
  return -1;
}

std::vector<int> IndexSet::members() const {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(count()));
  for_each([&](int i) { out.push_back(i); });
  return out;
}

uint64_t IndexSet::hash() const {
  uint64_t h = 1469598103934665603ull;   // FNV-1a offset basis
  auto mix = [&h](uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<uint64_t>(size_));
  for (uint64_t w : words_) mix(w);
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

// Lexicographic on ascending members. At the lowest index where the sets differ, the set holding
// it sorts first unless the other set has no member above that index (then the other is a proper
// prefix and sorts first).
std::strong_ordering IndexSet::operator<=>(const IndexSet& o) const {
  if (size_ != o.size_) return size_ <=> o.size_;
  for (size_t w = 0; w < words_.size(); ++w) {
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
