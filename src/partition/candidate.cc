// Candidate identity, order and deduplication (see src/partition/candidate.h).
#include "partition/candidate.h"
#include "ir/structural_hash.h"

#include <algorithm>
#include <numeric>

namespace tessera {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  for (int b = 0; b < 8; ++b) {
    h ^= (v >> (8 * b)) & 0xff;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::strong_ordering Composite::operator<=>(const Composite& o) const {
  if (auto c = inside <=> o.inside; c != 0) return c;
  return name <=> o.name;
}

std::string Candidate::debug_name() const {
  return backend + ":" + sub_graph.label() + inside().to_string();
}

bool Candidate::same_as(const Candidate& o) const {
  return backend == o.backend && inside() == o.inside() && composites == o.composites;
}

uint64_t Candidate::hash() const {
  uint64_t h = fnv1a64(backend, inside().hash());
  for (const auto& c : composites) h = fnv1a64(c.name, mix(h, c.inside.hash()));
  return h;
}

bool candidate_less(const Candidate& a, const Candidate& b) {
  if (auto c = a.inside() <=> b.inside(); c != 0) return c < 0;
  if (a.backend != b.backend) return a.backend < b.backend;
  return a.composites < b.composites;
}

void sort_and_dedupe(std::vector<Candidate>& candidates) {
  // A rule's output is often sorted already (OnlyValid filters its sorted sub-rule's): then only
  // dedupe. Otherwise positions are sorted, not candidates: a Candidate is a few hundred bytes of
  // sets, vectors and strings, and a merge sort moves every element at every level.
  if (!std::is_sorted(candidates.begin(), candidates.end(), candidate_less)) {
    std::vector<uint32_t> order(candidates.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return candidate_less(candidates[a], candidates[b]); });
    std::vector<Candidate> sorted;
    sorted.reserve(candidates.size());
    for (uint32_t i : order) sorted.push_back(std::move(candidates[i]));
    candidates = std::move(sorted);
  }
  auto last = std::unique(candidates.begin(), candidates.end(),
                          [](const Candidate& a, const Candidate& b) { return a.same_as(b); });
  candidates.erase(last, candidates.end());
}

}  // namespace tessera
