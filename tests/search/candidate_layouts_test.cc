// CandidateLayouts (src/search/candidate_layouts.cc): a candidate is priced with a graph input and a
// graph output that only it reads plain, as the plan runs it; everything else native; the
// default (nullopt) keeps the request's hash and database key.
#include <catch2/catch.hpp>

#include "search/candidate_layouts.h"
#include "support/graph_builder.h"
#include "partition/dataflow_index.h"
#include "ir/structural_hash.h"

using namespace tessera;

namespace {

//   x ─▶ Relu a ─▶ Relu b ─▶ Relu c ─▶ (output c)
//                        └──────────▶ (output b, also read by c)
Graph chain() {
  testing::GraphBuilder b;
  const Shape s{1, 8, 6, 6};
  const ValueId x = b.input("x", s);
  const ValueId a = b.op("Relu", "a", {x}, s);
  const ValueId r = b.op("Relu", "b", {a}, s);
  b.output(b.op("Relu", "c", {r}, s));
  b.output(r);
  return b.g;
}

}  // namespace

TEST_CASE("candidate layouts: graph inputs and graph-output-only results are plain, the rest native") {
  const Graph g = chain();
  const DataflowIndex index(g);
  const CandidateLayouts layouts(g);
  auto of = [&](std::initializer_list<NodeId> nodes, Layout native) {
    const SubGraph sg(index, IndexSet(index.size(), nodes));
    return layouts.of(sg, extract_function(g, sg), native);
  };
  using L = std::vector<Layout>;
  // {a}: reads the graph input (plain), hands a on to b (native).
  auto first = of({0}, Layout::nhwc);
  REQUIRE(first);
  CHECK(first->inputs == L{Layout::plain});
  CHECK(first->outputs == L{Layout::nhwc});
  // {c}: reads b (native), writes the graph output c that nobody reads (plain).
  auto last = of({2}, Layout::nhwc);
  REQUIRE(last);
  CHECK(last->inputs == L{Layout::nhwc});
  CHECK(last->outputs == L{Layout::plain});
  // {b}: b is a graph output, but c reads it outside the candidate: native both ways, the default.
  CHECK_FALSE(of({1}, Layout::nhwc));
  // {b, c}: both results are graph outputs; b is also read inside only (a tap): plain.
  auto tail = of({1, 2}, Layout::nhwc);
  REQUIRE(tail);
  CHECK(tail->outputs == L{Layout::plain, Layout::plain});
  // A backend whose native layout is plain prices everything plain already.
  CHECK_FALSE(of({0}, Layout::plain));
  CHECK_FALSE(of({0, 1, 2}, Layout::plain));
}

TEST_CASE("candidate layouts: apply mixes non-default layouts into the request's hash") {
  const Graph g = chain();
  const DataflowIndex index(g);
  const CandidateLayouts layouts(g);
  const SubGraph middle(index, IndexSet(index.size(), {1})), last(index, IndexSet(index.size(), {2}));
  const Graph fm = extract_function(g, middle), fl = extract_function(g, last);
  CostRequest rm(fm, structural_hash(fm), "xnnpack", "cpu"), rl(fl, structural_hash(fl), "xnnpack", "cpu");
  CHECK(rm.hash == rl.hash);   // the same function: one Relu of [1,8,6,6]
  layouts.apply(rm, middle, Layout::nhwc);
  layouts.apply(rl, last, Layout::nhwc);
  CHECK(rm.hash == structural_hash(fm));
  CHECK_FALSE(rm.layouts);
  CHECK(rl.hash != rm.hash);   // priced apart: its output is written plain
  REQUIRE(rl.layouts);
  CHECK(rl.layouts->outputs == std::vector<Layout>{Layout::plain});
}
