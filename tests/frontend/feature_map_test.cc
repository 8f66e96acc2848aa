// Feature maps (boundary_layout.h, mark_feature_maps): the activations that may cross between
// functions NHWC are those a spatial op reads or writes, directly or through elementwise,
// broadcast and channel ops; a 4-D value no spatial op touches (attention heads) stays plain.
#include <catch2/catch.hpp>

#include "support/graph_builder.h"
#include "ir/boundary_layout.h"
#include "frontend/json_graph.h"
#include "ir/structural_hash.h"
#include "frontend/test_util.h"

using namespace tessera;
using tessera::test::quiet;
using tessera::testing::GraphBuilder;

TEST_CASE("feature maps: what spatial ops touch, through elementwise and channel ops", "[frontend][layout]") {
  GraphBuilder b;
  // A CNN piece: x -> Conv -> Relu, concatenated with a skip input along channels.
  const ValueId x = b.input("x", {1, 3, 8, 8});
  const ValueId c = b.node("Conv", {x, b.weight("w", {8, 3, 1, 1})}, {1, 8, 8, 8});
  const ValueId r = b.node("Relu", {c}, {1, 8, 8, 8});
  const ValueId skip = b.input("skip", {1, 8, 8, 8});
  const ValueId cat = b.node("Concat", {r, skip}, {1, 16, 8, 8}, {{"axis", int64_t{1}}});
  // Attention over 4-D heads: q x k -> Mul -> Softmax. Same rank and dtype, no spatial op.
  const ValueId q = b.input("q", {1, 4, 16, 8}), k = b.input("k", {1, 4, 8, 16});
  const ValueId scores = b.node("MatMul", {q, k}, {1, 4, 16, 16});
  const ValueId scaled = b.node("Mul", {scores, b.scalar("scale", 0.5f)}, {1, 4, 16, 16});
  const ValueId probs = b.node("Softmax", {scaled}, {1, 4, 16, 16}, {{"axis", int64_t{-1}}});
  b.output(cat);
  b.output(probs);
  Graph g = b.g;
  mark_feature_maps(g);
  for (ValueId v : {x, c, r, skip, cat}) CHECK_FALSE(g.value(v).plain_only);
  for (ValueId v : {q, k, scores, scaled, probs}) CHECK(g.value(v).plain_only);
  CHECK(layout_sensitive(g.value(cat)));
  CHECK_FALSE(layout_sensitive(g.value(probs)));   // f32, rank 4, C and H*W > 1, but no feature map
  CHECK(native_boundary_layouts(g, Layout::nhwc).outputs == std::vector<Layout>{Layout::nhwc, Layout::plain});

  // A function of the structure alone: marking again changes nothing, and the JSON form
  // re-imports with the same marks (import numbers values its own way: compared by name).
  Graph again = g;
  mark_feature_maps(again);
  CHECK(again == g);
  const Graph back = graph_from_json(graph_to_json(g), "roundtrip.json", quiet());
  REQUIRE(back.values.size() == g.values.size());
  for (const Value& v : back.values)
    for (const Value& w : g.values)
      if (v.name == w.name) CHECK(v.plain_only == w.plain_only);

  // A plain-only 4-D value crosses in another layout, so the function is another one; where the
  // mark changes no memory order (2-D values), identity is what it was.
  CHECK(structural_hash(g) != structural_hash(b.g));
  GraphBuilder flat;
  flat.output(flat.node("Softmax", {flat.node("MatMul", {flat.input("a"), flat.input("b")}, {10, 10})}, {10, 10}));
  Graph marked = flat.g;
  mark_feature_maps(marked);
  CHECK(marked.value(marked.outputs[0]).plain_only);
  CHECK(structural_hash(marked) == structural_hash(flat.g));
}
