// Partition rules: base rules, composites, only-valid with reasons, fusion closure per style, and
// the closure against brute force (arbitrary fusion = every weakly connected convex sub-graph of
// fusable ops) and against a naive pairwise fixpoint (tvm, arbitrary with max_depth).
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "partition/dataflow_index.h"
#include "partition/partition_rule.h"
#include "partition/test_graphs.h"

using namespace tessera;
using tessera::testing::GraphBuilder;

namespace {

std::vector<Candidate> run(const PartitionRule& rule, const DataflowIndex& index, RuleStats* stats = nullptr) {
  RuleStats local;
  RuleContext ctx{index, "be", stats ? *stats : local};
  return rule.run(ctx);
}

std::set<std::vector<int>> insides(const std::vector<Candidate>& cs) {
  std::set<std::vector<int>> out;
  for (const auto& c : cs) out.insert(c.inside().members());
  return out;
}

PartitionRulePtr fusion(FusionStyle style, int max_depth = 0, std::vector<std::string> ops = {"*"}) {
  return make_fusion_rule("fuse", make_single_op_rule("single", std::move(ops)), {style, max_depth, 1000000});
}

// x -> Conv -> Add(bias) -> Relu -> MaxPool -> Relu
Graph conv_chain() {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId w = b.weight("w");
  ValueId c = b.op("Conv", "conv", {x, w});
  ValueId a = b.op("Add", "add", {c, w});
  ValueId r = b.op("Relu", "relu", {a});
  ValueId p = b.op("MaxPool", "pool", {r});
  b.output(b.op("Relu", "relu2", {p}));
  return std::move(b.g);
}

// Naive closure: unite every touching pair whose kinds allow it until nothing changes.
std::set<std::vector<int>> naive_closure(const DataflowIndex& index, FusionStyle style, int max_depth) {
  std::vector<SubGraph> members;
  std::set<std::vector<int>> seen;
  for (int i = 0; i < index.size(); ++i) {
    members.emplace_back(index, IndexSet::single(index.size(), i));
    seen.insert({i});
  }
  for (size_t i = 0; i < members.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const SubGraph &a = members[i], &b = members[j];
      if (!touches(a, b)) continue;
      bool ab = false, ba = false;
      a.inside().for_each([&](int n) {
        ab = ab || index.consumer_set(n).intersects(b.inside());
        ba = ba || index.producer_set(n).intersects(b.inside());
      });
      if (!((ab && fusion_allows(style, a.kind(), b.kind())) || (ba && fusion_allows(style, b.kind(), a.kind()))))
        continue;
      SubGraph u = disjoint_union(a, b);
      if (max_depth > 0 && u.depth() > max_depth) continue;
      if (seen.insert(u.inside().members()).second) members.push_back(u);
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("fusion_allows follows TVM's kind rules", "[rule]") {
  using K = OpKind;
  CHECK(fusion_allows(FusionStyle::Tvm, K::OutEWiseFusable, K::Broadcast));
  CHECK(!fusion_allows(FusionStyle::Tvm, K::OutEWiseFusable, K::Injective));
  CHECK(fusion_allows(FusionStyle::Tvm, K::Broadcast, K::Reduction));
  CHECK(fusion_allows(FusionStyle::Tvm, K::Injective, K::Injective));
  CHECK(!fusion_allows(FusionStyle::Tvm, K::Injective, K::Reduction));
  // "upstream kind <= first": a reduction (R <= A) may take elementwise/broadcast consumers.
  CHECK(fusion_allows(FusionStyle::Tvm, K::Reduction, K::Elementwise));
  CHECK(!fusion_allows(FusionStyle::Tvm, K::Reduction, K::Injective));
  CHECK(!fusion_allows(FusionStyle::Tvm, K::Opaque, K::Elementwise));
  CHECK(fusion_allows(FusionStyle::Arbitrary, K::OutEWiseFusable, K::OutEWiseFusable));
  CHECK(!fusion_allows(FusionStyle::Arbitrary, K::Opaque, K::Elementwise));
  CHECK(!fusion_allows(FusionStyle::None, K::Elementwise, K::Elementwise));
}

TEST_CASE("Single-op, host and union rules", "[rule]") {
  Graph g = conv_chain();
  DataflowIndex index(g);
  auto single = make_single_op_rule("s", {"Relu", "Conv"});
  CHECK(insides(run(*single, index)) == std::set<std::vector<int>>{{0}, {2}, {4}});
  auto host = make_host_rule("host");
  CHECK(run(*host, index).size() == 5);
  std::vector<PartitionRulePtr> parts;
  parts.push_back(make_single_op_rule("a", {"Relu"}));
  parts.push_back(make_single_op_rule("b", {"Relu", "Add"}));
  auto both = make_union_rule("u", std::move(parts));
  auto cs = run(*both, index);
  CHECK(insides(cs) == std::set<std::vector<int>>{{1}, {2}, {4}});
  CHECK(cs.size() == 3);   // {2} and {4} from both sub-rules dedupe
  CHECK(cs[0].backend == "be");
  CHECK(cs[0].rule == "b");
}

TEST_CASE("tvm fusion: conv + bias + relu; a conv group does not take a pooling", "[rule]") {
  Graph g = conv_chain();
  DataflowIndex index(g);
  auto cs = run(*fusion(FusionStyle::Tvm), index);
  // Conv->Add and {Conv,Add}->Relu are A->B; Relu->MaxPool is B->R; MaxPool->Relu is R->E, allowed
  // by A->B since R <= A. But {Conv,Add,Relu} (kind A) never takes MaxPool (R is neither <= B
  // nor downstream of a kind <= B).
  CHECK(insides(cs) == std::set<std::vector<int>>{{0}, {1}, {2}, {3}, {4}, {0, 1}, {1, 2}, {0, 1, 2},
                                                  {2, 3}, {1, 2, 3}, {3, 4}, {2, 3, 4}, {1, 2, 3, 4}});
  auto none = run(*fusion(FusionStyle::None), index);
  CHECK(none.size() == 5);
  // The order is the IndexSet total order.
  for (size_t i = 1; i < cs.size(); ++i) CHECK(cs[i - 1].inside() < cs[i].inside());
}

TEST_CASE("Only-valid counts rejections by reason", "[rule]") {
  // r0 = Relu(x); a = Abs(r0); r1 = Relu(a); out = Add(a, r1): {a, r1} has a tap and two exits.
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId r0 = b.op("Relu", "r0", {x});
  ValueId a = b.op("Abs", "a", {r0});
  ValueId r1 = b.op("Relu", "r1", {a});
  b.output(b.op("Add", "out", {a, r1}));
  DataflowIndex index(b.g);
  auto rule = make_only_valid_rule("valid", fusion(FusionStyle::Arbitrary), {2, 1, false});
  RuleStats stats;
  auto cs = run(*rule, index, &stats);
  // Closure: 4 singles, {0,1} {1,2} {1,2,3} {0,1,2} {0,1,2,3}; {1,3} is not convex (skips r1).
  CHECK(insides(cs) == std::set<std::vector<int>>{{0}, {1}, {2}, {3}, {0, 1}, {2, 3}});
  CHECK(stats.rejections["depth 3, max 2"] == 2);     // {0,1,2}, {1,2,3}
  CHECK(stats.rejections["depth 4, max 2"] == 1);     // {0,1,2,3}
  CHECK(stats.rejections["2 exits, max 1"] == 1);     // {1,2}: a also feeds out
  int64_t total = 0;
  for (const auto& [reason, n] : stats.rejections) total += n;
  CHECK(total == 4);
}

TEST_CASE("Composites travel with candidates and dedupe by structure", "[rule]") {
  Graph g = conv_chain();
  DataflowIndex index(g);
  std::vector<CompositeSpec> specs{{"be.cbr", "Relu(Add(Conv(*, const), const))",
                                    parse_pattern("Relu(Add(Conv(*, const), const))")},
                                   {"be.relu", "Relu(*)", parse_pattern("Relu(*)")}};
  std::vector<PartitionRulePtr> seeds;
  seeds.push_back(make_composite_rule("comp", specs));
  seeds.push_back(make_single_op_rule("single", {"Relu"}));
  auto rule = make_fusion_rule("fuse", make_union_rule("seeds", std::move(seeds)),
                               {FusionStyle::Arbitrary, 0, 1000000});
  auto cs = run(*rule, index);
  // {2} twice (a Relu composite and a plain Relu), {4} twice, {0,1,2} once; nothing else fuses:
  // MaxPool is not supported and {0,1,2} + {2} overlap.
  REQUIRE(cs.size() == 5);
  CHECK(cs[0].inside().members() == std::vector<int>{0, 1, 2});
  REQUIRE(cs[0].composites.size() == 1);
  CHECK(cs[0].composites[0].name == "be.cbr");
  CHECK(cs[0].rule == "comp");
  CHECK(cs[1].inside().members() == std::vector<int>{2});
  CHECK(cs[1].composites.empty());                   // plain sorts before composite
  CHECK(cs[2].composites.size() == 1);
  CHECK(cs[2].composites[0].name == "be.relu");
  CHECK(!cs[1].same_as(cs[2]));
  CHECK(cs[1].hash() != cs[2].hash());
}

TEST_CASE("Fusion closure never fuses opaque ops and reports its limit", "[rule]") {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId v = x;
  for (int i = 0; i < 12; ++i) v = b.op(i == 6 ? "MyCustomOp" : "Relu", "n" + std::to_string(i), {v});
  b.output(v);
  DataflowIndex index(b.g);
  auto cs = run(*fusion(FusionStyle::Arbitrary), index);
  // Chains of 6 and 5 fusable nodes (21 and 15 intervals) plus the opaque node alone.
  CHECK(cs.size() == 21 + 15 + 1);
  auto depth_limited = run(*fusion(FusionStyle::Arbitrary, 2), index);
  CHECK(depth_limited.size() == 6 + 5 + 5 + 4 + 1);

  RuleStats stats;
  auto limited_rule = make_fusion_rule("fuse", make_single_op_rule("single", {"*"}),
                                       {FusionStyle::Arbitrary, 0, 20});
  auto limited = run(*limited_rule, index, &stats);
  CHECK(limited.size() == 20);
  REQUIRE(stats.limits.size() == 1);
  CHECK(stats.limits[0].find("stopped at 20 candidates") != std::string::npos);
}

TEST_CASE("Arbitrary fusion closure equals brute force on random DAGs", "[rule][closure]") {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 60; ++trial) {
    int n = 4 + trial % 7;   // 4..10 nodes
    Graph g = testing::random_dag(rng, n, {"Relu", "Abs", "Transpose", "MyCustomOp", "ReduceSum"},
                                  {"Add", "MatMul", "Mul"});
    DataflowIndex index(g);
    std::set<std::vector<int>> expected;
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      IndexSet s(n);
      for (int i = 0; i < n; ++i)
        if (mask & (1u << i)) s.insert(i);
      SubGraph sg(index, s);
      bool single = s.count() == 1;
      if (!single && sg.kind() == OpKind::Opaque) continue;
      if (sg.is_weakly_connected() && sg.is_convex()) expected.insert(s.members());
    }
    auto cs = run(*fusion(FusionStyle::Arbitrary), index);
    INFO("trial " << trial << ", " << n << " nodes");
    CHECK(insides(cs) == expected);
    CHECK(cs.size() == expected.size());
  }
}

TEST_CASE("Fusion closure equals the naive pairwise fixpoint (tvm, depth limits)", "[rule][closure]") {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 60; ++trial) {
    int n = 4 + trial % 6;
    Graph g = testing::random_dag(rng, n, {"Relu", "Transpose", "ReduceSum", "Conv", "MyCustomOp"},
                                  {"Add", "MatMul", "Concat"});
    DataflowIndex index(g);
    for (FusionStyle style : {FusionStyle::Tvm, FusionStyle::Arbitrary}) {
      for (int depth : {0, 2, 3}) {
        INFO("trial " << trial << ", style " << fusion_style_name(style) << ", max_depth " << depth);
        CHECK(insides(run(*fusion(style, depth), index)) == naive_closure(index, style, depth));
      }
    }
  }
}

TEST_CASE("Fusion closure with members over 32 nodes: exactly the intervals of a chain with skips", "[rule][closure]") {
  // c0 -> c1 -> ... -> c69 (Relu), where c40 = Add(c39, c5) and c65 = Add(c64, c10). A connected
  // convex set here is an interval: one that takes a skip edge without the nodes it jumps over is
  // not convex. Intervals up to 70 nodes, so large members (reachability kept whole) and small
  // ones (ORed on demand) meet in one closure; {c0..c5} | {c40..c69} must be refused.
  GraphBuilder b;
  std::vector<ValueId> c{b.op("Relu", "c0", {b.input("x")})};
  for (int i = 1; i < 70; ++i) {
    const std::string name = "c" + std::to_string(i);
    if (i == 40 || i == 65) c.push_back(b.op("Add", name, {c.back(), c[i == 40 ? 5 : 10]}));
    else c.push_back(b.op("Relu", name, {c.back()}));
  }
  b.output(c.back());
  DataflowIndex index(b.g);
  std::set<std::vector<int>> intervals;
  for (int i = 0; i < 70; ++i)
    for (int j = i; j < 70; ++j) {
      std::vector<int> members;
      for (int k = i; k <= j; ++k) members.push_back(k);
      intervals.insert(members);
    }
  auto cs = run(*fusion(FusionStyle::Arbitrary), index);
  CHECK(cs.size() == intervals.size());
  CHECK(insides(cs) == intervals);
}

TEST_CASE("Enumeration is deterministic", "[rule]") {
  std::mt19937 rng(5);
  Graph g = testing::random_dag(rng, 30, {"Relu", "Abs", "Transpose"}, {"Add", "MatMul"});
  DataflowIndex index(g);
  auto rule = make_only_valid_rule("v", fusion(FusionStyle::Arbitrary, 3), {3, 1, false});
  auto a = run(*rule, index), b = run(*rule, index);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].same_as(b[i]));
}
