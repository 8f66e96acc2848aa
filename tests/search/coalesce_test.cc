// Coalescing (src/search/coalesce.h) against the definition it implements: merge touching partitions
// of one backend while the union is convex and the partition DAG stays acyclic, in partition
// order. The reference below checks both conditions from scratch for every merge (quadratic, as
// coalescing itself once did); the fast one searches the partition DAG for a path around the
// merged edge. They must agree partition for partition, also where groups are disconnected.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "partition/test_graphs.h"
#include "search/random_backends.h"
#include "search/coalesce.h"
#include "search/partition_dag.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

std::vector<Partition> reference_coalesce(const DataflowIndex& index, std::vector<Partition> parts) {
  std::sort(parts.begin(), parts.end(), [](const Partition& a, const Partition& b) { return a.nodes < b.nodes; });
  std::vector<int> owner(static_cast<size_t>(index.size()), -1);
  for (size_t g = 0; g < parts.size(); ++g) parts[g].nodes.for_each([&](int v) { owner[size_t(v)] = int(g); });
  std::vector<char> alive(parts.size(), 1);
  auto neighbours = [&](int g) {
    std::set<int> out;
    parts[size_t(g)].nodes.for_each([&](int v) {
      for (NodeId u : index.producers(v)) out.insert(owner[size_t(u)]);
      for (NodeId u : index.consumers(v)) out.insert(owner[size_t(u)]);
    });
    out.erase(g);
    out.erase(-1);
    return out;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t g = 0; g < parts.size(); ++g) {
      for (bool merged = alive[g] != 0; merged;) {
        merged = false;
        for (int h : neighbours(int(g))) {
          if (parts[size_t(h)].backend != parts[g].backend) continue;
          const IndexSet u = parts[g].nodes | parts[size_t(h)].nodes;
          if (!is_convex_set(index, u)) continue;
          parts[size_t(h)].nodes.for_each([&](int v) { owner[size_t(v)] = int(g); });
          if (!contracted_acyclic(index, owner, int(parts.size()))) {
            parts[size_t(h)].nodes.for_each([&](int v) { owner[size_t(v)] = h; });
            continue;
          }
          parts[g].nodes = u;
          parts[size_t(h)].nodes.clear();
          alive[size_t(h)] = 0;
          merged = changed = true;
          break;
        }
      }
    }
  }
  std::vector<Partition> out;
  for (size_t g = 0; g < parts.size(); ++g)
    if (alive[g]) out.push_back(parts[g]);
  return out;
}

Partition group(const std::string& backend, IndexSet nodes) {
  Partition p;
  p.backend = backend;
  p.device = "cpu";
  p.cost = Cost::value(1.0);
  p.candidates.push_back({nodes, backend + ".single", Cost::value(1.0), {}});
  p.nodes = std::move(nodes);
  return p;
}

std::string describe(const std::vector<Partition>& parts) {
  std::string out;
  for (const Partition& p : parts) out += p.backend + p.nodes.to_string() + " ";
  return out;
}

}  // namespace

TEST_CASE("coalescing equals the from-scratch reference on 300 random DAGs with disconnected groups", "[search][coalesce]") {
  std::mt19937 rng(20261125);
  int merges = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = std::uniform_int_distribution<int>(3, 24)(rng);
    const Graph g = random_dag(rng, n, kRandomUnary, kRandomBinary);
    const DataflowIndex index(g);
    // Singletons with random backends, then random merges of same-backend groups, touching or
    // not, kept whenever the partition DAG stays acyclic: groups that coalescing must see whole.
    std::vector<IndexSet> groups;
    std::vector<std::string> backend;
    for (int v = 0; v < index.size(); ++v) {
      groups.push_back(IndexSet::single(index.size(), v));
      backend.push_back(std::uniform_int_distribution<int>(0, 1)(rng) ? "x" : "y");
    }
    for (int k = 0; k < index.size(); ++k) {
      const size_t a = std::uniform_int_distribution<size_t>(0, groups.size() - 1)(rng);
      const size_t b = std::uniform_int_distribution<size_t>(0, groups.size() - 1)(rng);
      if (a == b || backend[a] != backend[b] || !std::uniform_int_distribution<int>(0, 2)(rng)) continue;
      std::vector<IndexSet> trial_groups = groups;
      trial_groups[a] |= trial_groups[b];
      trial_groups.erase(trial_groups.begin() + static_cast<long>(b));
      if (!partitions_acyclic(index, trial_groups)) continue;
      groups = std::move(trial_groups);
      backend.erase(backend.begin() + static_cast<long>(b));
    }
    std::vector<Partition> parts;
    for (size_t i = 0; i < groups.size(); ++i) parts.push_back(group(backend[i], groups[i]));
    INFO("trial " << trial << ": " << describe(parts));
    const std::vector<Partition> want = reference_coalesce(index, parts);
    const std::vector<Partition> got = coalesce_partitions(index, parts);
    REQUIRE(describe(got) == describe(want));
    std::vector<IndexSet> out;
    for (const Partition& p : got) {
      out.push_back(p.nodes);
      CHECK(is_convex_set(index, p.nodes));
      CHECK(p.cost.number() == Approx(static_cast<double>(p.candidates.size())));
      CHECK(std::is_sorted(p.candidates.begin(), p.candidates.end(),
                           [](const ChosenCandidate& a, const ChosenCandidate& b) { return a.nodes < b.nodes; }));
    }
    CHECK(partitions_acyclic(index, out));
    merges += static_cast<int>(parts.size() - got.size());
    // Touching same-backend pairs left apart: each would close a cycle.
    for (size_t i = 0; i < got.size(); ++i)
      for (size_t j = i + 1; j < got.size(); ++j)
        if (got[i].backend == got[j].backend) {
          std::vector<IndexSet> joined = out;
          joined[i] |= joined[j];
          joined.erase(joined.begin() + static_cast<long>(j));
          bool touching = false;
          got[i].nodes.for_each([&](int v) {
            for (NodeId u : index.consumers(v)) touching = touching || got[j].nodes.contains(u);
            for (NodeId u : index.producers(v)) touching = touching || got[j].nodes.contains(u);
          });
          if (!touching) continue;
          ++refused;
          CHECK_FALSE(partitions_acyclic(index, joined));
        }
  }
  CHECK(merges > 300);   // what the trials covered: merges and refusals both happened
  CHECK(refused > 10);
}

TEST_CASE("coalescing does not merge two touching groups around a disconnected third", "[search][coalesce]") {
  // a -> c1, c2 -> b, a -> b: {a} and {b} touch, but {c1, c2} (one group on another backend)
  // lies on a path a -> c1 ~ c2 -> b once groups are contracted: merging {a} and {b} would close
  // a cycle, although {a, b} itself is convex.
  GraphBuilder b;
  const ValueId x = b.input("x");
  const ValueId a = b.op("Relu", "a", {x});
  const ValueId c2 = b.op("Abs", "c2", {x});
  const ValueId c1 = b.op("Abs", "c1", {a});
  b.output(b.op("Add", "b", {a, c2}));
  b.output(c1);
  const DataflowIndex index(b.g);
  auto node = [&](const char* name) { return IndexSet::single(index.size(), b.g.find_node(name)); };
  std::vector<Partition> parts{group("x", node("a")), group("y", node("c1") | node("c2")), group("x", node("b"))};
  CHECK(describe(coalesce_partitions(index, parts)) == describe(reference_coalesce(index, parts)));
  CHECK(coalesce_partitions(index, parts).size() == 3);
}
