// onednn: a function's intermediates in one arena (onednn_memory_plan.h). The offsets of
// plan_arena on chains and at random (buffers live at once never share a byte), and programs
// with the plan against ref: inverted-residual chains (expand, depthwise, project, residual sum),
// with SiLU host passes and a squeeze-and-excitation scale, and a Concat copied by the host. The
// workspace of a chain shrinks to a few of its buffers (one allocation each without the plan).
#include <random>

#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_memory_plan.h"
#include "backends/onednn/onednn_program.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using I = std::vector<int64_t>;

namespace {

size_t workspace(const Graph& g) { return onednn::OnednnProgram(g, dnnl::engine(dnnl::engine::kind::cpu, 0)).workspace_bytes(); }

// conv with weights of shape `w` (an input, as extracted functions have them), then `act`.
ValueId conv(FunctionBuilder& b, ValueId x, Shape w, Shape y, Attributes attrs, const std::string& act) {
  const ValueId c = b.node("Conv", {x, b.input("w" + std::to_string(b.g.values.size()), w), b.input("b" + std::to_string(b.g.values.size()), {w[0]})}, y,
                           std::move(attrs));
  if (act.empty()) return c;
  if (act == "SiLU") return b.node("Mul", {c, b.node("Sigmoid", {c}, y)}, y);
  return b.node(act, {c}, y);
}

// MobileNetV2's block: 1x1 expand + act, 3x3 depthwise + act, (SE scale), 1x1 project, + x.
ValueId inverted_residual(FunctionBuilder& b, ValueId x, int64_t expand, const std::string& act, bool se) {
  const Shape xs = b.g.value(x).type.shape;   // a copy: building adds values
  const int64_t c = xs[1], e = c * expand;
  const Shape es{xs[0], e, xs[2], xs[3]};
  ValueId h = conv(b, x, {e, c, 1, 1}, es, {}, act);
  h = conv(b, h, {e, 1, 3, 3}, es, {{"group", e}, {"pads", I{1, 1, 1, 1}}}, act);
  if (se) {
    const Shape ps{xs[0], e, 1, 1}, qs{xs[0], e / 4, 1, 1};
    const ValueId p = b.node("GlobalAveragePool", {h}, ps);
    const ValueId q = conv(b, p, {e / 4, e, 1, 1}, qs, {}, "Relu");
    const ValueId s = conv(b, q, {e, e / 4, 1, 1}, ps, {}, "Sigmoid");
    h = b.node("Mul", {h, s}, es);
  }
  return b.node("Add", {conv(b, h, {c, e, 1, 1}, xs, {}, ""), x}, xs);
}

size_t bytes(const FunctionBuilder& b, ValueId v) { return static_cast<size_t>(b.g.value(v).type.numel()) * sizeof(float); }

}  // namespace

TEST_CASE("onednn memory plan: a chain reuses bytes; buffers live at once never overlap") {
  using onednn::BufferLife;
  // expand -> A [0,1], dw -> B [1,2], project -> C [2,3], expand -> D [3,4]
  const std::vector<BufferLife> chain{{1000, 0, 1}, {1000, 1, 2}, {200, 2, 3}, {1000, 3, 4}};
  const onednn::ArenaPlan p = onednn::plan_arena(chain);
  CHECK(p.bytes <= 2 * 1024 + 256);   // two large buffers and the small one
  CHECK(p.offsets[0] != p.offsets[1]);
  CHECK(p.offsets[3] != p.offsets[2]);

  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferLife> bufs(20);
    for (BufferLife& l : bufs) {
      l.bytes = 1 + rng() % 5000;
      l.first = rng() % 30;
      l.last = l.first + rng() % 6;
    }
    const onednn::ArenaPlan q = onednn::plan_arena(bufs);
    for (size_t i = 0; i < bufs.size(); ++i) {
      CHECK(q.offsets[i] % 64 == 0);
      CHECK(q.offsets[i] + bufs[i].bytes <= q.bytes);
      for (size_t j = i + 1; j < bufs.size(); ++j) {
        const bool live_together = bufs[i].first <= bufs[j].last && bufs[j].first <= bufs[i].last;
        const bool apart = q.offsets[i] + bufs[i].bytes <= q.offsets[j] || q.offsets[j] + bufs[j].bytes <= q.offsets[i];
        if (live_together) CHECK(apart);
      }
    }
  }
}

TEST_CASE("onednn memory plan: inverted-residual chains match ref in a workspace of a few buffers") {
  for (const std::string act : {"Relu", "SiLU", "HardSwish"}) {
    for (const bool se : {false, true}) {
      DYNAMIC_SECTION(act << (se ? " with SE" : "")) {
        FunctionBuilder b;
        ValueId x = b.input("x", {1, 16, 32, 32});
        size_t activations = 0;
        for (int block = 0; block < 3; ++block) {
          x = inverted_residual(b, x, 6, act, se);
          activations += 2 * 6 * bytes(b, x) + 2 * bytes(b, x);
        }
        b.output(x);
        check_against_ref("onednn", b.g, 1e-3);
        // Each block's two expanded buffers 96x32x32 floats; without the plan every buffer is its
        // own allocation (more than `activations`).
        CHECK(workspace(b.g) < activations / 2);
      }
    }
  }
}

TEST_CASE("onednn memory plan: a Concat the host copies, its inputs read after it, matches ref") {
  FunctionBuilder b;
  const Shape s{1, 8, 12, 12}, s2{1, 16, 12, 12};
  const ValueId x = b.input("x", s);
  const ValueId a = conv(b, x, {8, 8, 3, 3}, s, {{"pads", I{1, 1, 1, 1}}}, "Relu");
  const ValueId c = b.node("Concat", {a, x}, s2, {{"axis", int64_t(1)}});   // x is an input: copied
  const ValueId d = conv(b, c, {8, 16, 1, 1}, s, {}, "Relu");
  b.output(b.node("Add", {conv(b, d, {8, 8, 3, 3}, s, {{"pads", I{1, 1, 1, 1}}}, ""), a}, s));
  check_against_ref("onednn", b.g, 1e-3);
}
