// IndexSet algebra, iteration, hashing and total order.
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "tessera/index_set.h"

using tessera::IndexSet;

TEST_CASE("IndexSet algebra across word boundaries", "[index_set]") {
  IndexSet a(130, {0, 63, 64, 129});
  IndexSet b(130, {63, 100, 129});
  CHECK((a | b).members() == std::vector<int>{0, 63, 64, 100, 129});
  CHECK((a & b).members() == std::vector<int>{63, 129});
  CHECK((a - b).members() == std::vector<int>{0, 64});
  CHECK(a.count() == 4);
  CHECK(a.intersects(b));
  CHECK(!(a - b).intersects(b));
  CHECK((a & b).is_subset_of(a));
  CHECK(!a.is_subset_of(b));
  CHECK(a.complement().count() == 126);
  CHECK((a.complement() & a).empty());
  CHECK(IndexSet::all(130).count() == 130);
  CHECK(IndexSet::all(130) == (a | a.complement()));
}

TEST_CASE("IndexSet first, next, last, first_unset", "[index_set]") {
  IndexSet s(200, {5, 64, 199});
  CHECK(s.first() == 5);
  CHECK(s.next(5) == 64);
  CHECK(s.next(64) == 199);
  CHECK(s.next(199) == -1);
  CHECK(s.last() == 199);
  CHECK(IndexSet(200).first() == -1);
  CHECK(IndexSet(200).last() == -1);
  IndexSet full = IndexSet::all(70);
  CHECK(full.first_unset() == 70);
  full.erase(65);
  CHECK(full.first_unset() == 65);
  CHECK(IndexSet(3, {0, 1}).first_unset() == 2);
  CHECK(IndexSet(0).empty());
  CHECK(IndexSet(0).first_unset() == 0);
}

TEST_CASE("IndexSet and3_within is the convexity test", "[index_set]") {
  IndexSet inside(8, {1, 2}), down(8, {2, 3, 4}), up(8, {0, 1, 3});
  CHECK(!inside.and3_within(down, up, IndexSet::all(8)));   // 3 is outside, reached and reaching
  inside.insert(3);
  CHECK(inside.and3_within(down, up, IndexSet::all(8)));
}

TEST_CASE("IndexSet hash is stable and order is lexicographic on members", "[index_set]") {
  // Pinned: FNV-1a over the size and the 64-bit words. Changing these literals changes every
  // hash-keyed order and cache built on IndexSet: a format break, to be made only with a version
  // bump and a migration note in docs/.
  CHECK(IndexSet(10, {1, 3}).hash() == 0xc331ff9a46d40103ull);
  CHECK(IndexSet(130, {0, 63, 64, 129}).hash() == 0x31fed553df79bf23ull);
  CHECK(IndexSet(0).hash() == 0x47fe0d7eaf8e51e3ull);
  CHECK(IndexSet(10, {1, 3}).hash() == IndexSet(10, {3, 1}).hash());
  CHECK(IndexSet(10, {1, 3}).hash() != IndexSet(10, {1, 4}).hash());
  CHECK(IndexSet(10, {1, 3}).hash() != IndexSet(11, {1, 3}).hash());
  CHECK(IndexSet(10, {1, 3}).to_string() == "{1,3}");

  CHECK(IndexSet(10, {0, 1}) < IndexSet(10, {0, 2}));
  CHECK(IndexSet(10, {0, 2}) < IndexSet(10, {1}));
  CHECK(IndexSet(10, {0}) < IndexSet(10, {0, 1}));
  CHECK(IndexSet(10) < IndexSet(10, {0}));
  CHECK(IndexSet(100, {70}) < IndexSet(100, {71}));
  CHECK(IndexSet(100, {1, 90}) < IndexSet(100, {2}));

  // Against the definition on random sets spanning several words.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    IndexSet a(150), b(150);
    for (int i = 0; i < 150; ++i) {
      if (rng() % 9 == 0) a.insert(i);
      if (rng() % 9 == 0) b.insert(i);
    }
    if (trial % 3 == 0) b = a | IndexSet(150, {static_cast<int>(rng() % 150)});
    auto am = a.members(), bm = b.members();
    CHECK(((a <=> b) < 0) == std::lexicographical_compare(am.begin(), am.end(), bm.begin(), bm.end()));
    CHECK(((a <=> b) == 0) == (am == bm));
  }
}

// The window (index_set.h): every operation, against std::set, on sets whose windows are loose
// (erase), empty after an intersection, or moved from; hash against FNV-1a over all the words.
TEST_CASE("IndexSet windows: random operations agree with std::set and the dense hash", "[index_set]") {
  auto dense_hash = [](const std::set<int>& m, int size) {
    std::vector<uint64_t> words((static_cast<size_t>(size) + 63) / 64, 0);
    for (int i : m) words[static_cast<size_t>(i) / 64] |= uint64_t{1} << (i % 64);
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) {
      for (int b = 0; b < 8; ++b) h = (h ^ ((v >> (8 * b)) & 0xff)) * 1099511628211ull;
    };
    mix(static_cast<uint64_t>(size));
    for (uint64_t w : words) mix(w);
    return h;
  };
  std::mt19937 rng(20261125);
  const int n = 700;
  for (int trial = 0; trial < 3000; ++trial) {
    IndexSet a(n), b(n);
    std::set<int> am, bm;
    // Members clustered in a window (a candidate), sometimes anywhere (a search state).
    auto fill = [&](IndexSet& s, std::set<int>& m) {
      const int from = static_cast<int>(rng() % n), width = trial % 4 == 0 ? n : 1 + static_cast<int>(rng() % 130);
      for (int k = static_cast<int>(rng() % 6); k > 0; --k) {
        const int i = (from + static_cast<int>(rng() % static_cast<unsigned>(width))) % n;
        s.insert(i);
        m.insert(i);
      }
    };
    fill(a, am);
    fill(b, bm);
    if (!am.empty() && rng() % 2) {   // a loose span
      const int gone = *am.begin();
      a.erase(gone);
      am.erase(gone);
    }
    IndexSet moved = std::move(b);    // b is moved from: empty, and usable again
    b.clear();
    CHECK(b.empty());
    b = std::move(moved);
    auto same = [&](const IndexSet& s, const std::set<int>& m) {
      CHECK(s.members() == std::vector<int>(m.begin(), m.end()));
      CHECK(s.count() == static_cast<int>(m.size()));
      CHECK(s.empty() == m.empty());
      CHECK(s.first() == (m.empty() ? -1 : *m.begin()));
      CHECK(s.last() == (m.empty() ? -1 : *m.rbegin()));
      CHECK(s.hash() == dense_hash(m, n));
      IndexSet tight(n);   // the same members in a tight window: the same in-memory hash
      for (int k : m) tight.insert(k);
      CHECK(s.fast_hash() == tight.fast_hash());
      const int probe = static_cast<int>(rng() % n);
      auto above = m.upper_bound(probe);
      CHECK(s.next(probe) == (above == m.end() ? -1 : *above));
      CHECK(s.contains(probe) == (m.count(probe) == 1));
    };
    same(a, am);
    same(b, bm);
    std::set<int> u = am, i, d;
    u.insert(bm.begin(), bm.end());
    std::set_intersection(am.begin(), am.end(), bm.begin(), bm.end(), std::inserter(i, i.end()));
    std::set_difference(am.begin(), am.end(), bm.begin(), bm.end(), std::inserter(d, d.end()));
    same(a | b, u);
    same(a & b, i);
    same(a - b, d);
    CHECK(a.intersects(b) == !i.empty());
    CHECK(a.is_subset_of(b) == (d.empty()));
    CHECK((a == b) == (am == bm));
    CHECK(((a & b) == IndexSet(n)) == i.empty());
    CHECK((a <=> b == 0) == (am == bm));
    CHECK((a < b) == std::lexicographical_compare(am.begin(), am.end(), bm.begin(), bm.end()));
    IndexSet grown = a & b;   // empty span after a disjoint intersection, then grown again
    grown |= b;
    same(grown, bm);
  }
}
