// Attention blocks on onednn against ref: the head split as views (onednn_operand_views.cc) and
// Softmax as the host pass (onednn_host_softmax.h).
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_host_softmax.h"
#include "backends/onednn/onednn_program.h"
#include "onednn_implementations.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using tessera::testing::count_prefix;
using tessera::testing::listing;
using I = std::vector<int64_t>;

namespace {

ValueId ints(FunctionBuilder& b, I v) {
  return b.constant<int64_t>("c" + std::to_string(b.g.values.size()), DType::i64, {int64_t(v.size())}, v);
}


// torch's MultiheadAttention as exported: one projection to [S, 1, 3E], three Slices, each
// Reshaped to [S, h, d] and Transposed to [h, S, d] (K to [h, d, S]), Q * K^T, Softmax, * V, the
// heads merged back to [S, E].
Graph attention(int64_t S, int64_t h, int64_t d) {
  const int64_t E = h * d;
  FunctionBuilder b;
  const ValueId x = b.input("x", {S, 1, E}), w = b.input("w", {E, 3 * E});
  const ValueId qkv = b.node("MatMul", {x, w}, {S, 1, 3 * E});
  std::vector<ValueId> parts;
  for (int64_t k = 0; k < 3; ++k)
    parts.push_back(b.node("Slice", {qkv, ints(b, {k * E}), ints(b, {(k + 1) * E}), ints(b, {2})}, {S, 1, E}));
  const auto heads = [&](ValueId v, I perm, Shape out) {
    return b.node("Transpose", {b.node("Reshape", {v, ints(b, {S, h, d})}, {S, h, d})}, out, {{"perm", perm}});
  };
  const ValueId q = heads(parts[0], {1, 0, 2}, {h, S, d});
  const ValueId kt = heads(parts[1], {1, 2, 0}, {h, d, S});
  const ValueId v = heads(parts[2], {1, 0, 2}, {h, S, d});
  const ValueId scores = b.node("MatMul", {q, kt}, {h, S, S});
  const ValueId p = b.node("Softmax", {scores}, {h, S, S}, {{"axis", int64_t{-1}}});
  const ValueId o = b.node("MatMul", {p, v}, {h, S, d});
  const ValueId merged = b.node("Transpose", {o}, {S, h, d}, {{"perm", I{1, 0, 2}}});
  b.output(b.node("MatMul", {b.node("Reshape", {merged, ints(b, {S, E})}, {S, E}), b.input("wo", {E, E})}, {S, E}));
  return b.g;
}

}  // namespace

// Built op by op, the block copied each Slice's window, then each head transpose (K's with inner
// runs of one float), then the merge: 7 reorders. With the views the windows are read in place
// by the head transposes and K^T is written for the MatMul as B in its swapped layout: 4.
TEST_CASE("onednn: attention's head split reads the projection in place; K^T is the MatMul's B as written") {
  for (const int64_t S : {7, 33}) {
    const Graph fn = attention(S, 3, 16);
    INFO("S = " << S);
    check_against_ref("onednn", fn);
    const std::vector<std::string> impls = onednn::OnednnProgram(fn, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
    INFO(listing(impls));
    CHECK(count_prefix(impls, "reorder:") == 4);
    CHECK(count_prefix(impls, "matmul:") == 4);
  }
  // A window some other op reads (here a Relu) stays a copy of its own.
  FunctionBuilder b;
  const ValueId x = b.input("x", {4, 24}), w = b.input("w", {24, 24});
  const ValueId y = b.node("MatMul", {x, w}, {4, 24});
  const ValueId s = b.node("Slice", {y, ints(b, {8}), ints(b, {16}), ints(b, {1})}, {4, 8});
  b.output(b.node("Relu", {s}, {4, 8}));
  b.output(b.node("Transpose", {b.node("Slice", {y, ints(b, {0}), ints(b, {8}), ints(b, {1})}, {4, 8})}, {8, 4}, {{"perm", I{1, 0}}}));
  check_against_ref("onednn", b.g);
  // A window whose Transpose only moves a size-1 axis, summed into a MatMul's result, while its
  // source is read again later: the Transpose copies (a relabelling view could be summed into in
  // place, writing into the source's bytes).
  FunctionBuilder r;
  const ValueId rx = r.input("x", {6, 1, 8}), rw = r.input("w", {8, 8}), rw2 = r.input("w2", {8, 8});
  const ValueId ry = r.node("MatMul", {rx, rw}, {6, 1, 8});
  const ValueId win = r.node("Slice", {ry, ints(r, {0}), ints(r, {3}), ints(r, {0})}, {3, 1, 8});
  const ValueId moved = r.node("Transpose", {win}, {1, 3, 8}, {{"perm", I{1, 0, 2}}});
  const ValueId z = r.node("MatMul", {r.input("a", {1, 3, 8}), rw2}, {1, 3, 8});
  r.output(r.node("Add", {z, moved}, {1, 3, 8}));
  r.output(r.node("Relu", {ry}, {6, 1, 8}));
  check_against_ref("onednn", r.g);
}

// Softmax over the last axis: the host pass where it is compiled in (AVX-512), one per Softmax,
// on odd row lengths (a masked tail) and on rows of large values (exp of x - max only).
TEST_CASE("onednn: Softmax over the last axis is the host pass, matching ref") {
  for (const int64_t n : {5, 16, 197}) {
    FunctionBuilder b;
    const Shape xs{2, 3, n};
    const ValueId x = b.input("x", xs);
    const ValueId big = b.node("Mul", {x, b.scalar("k", 60.0f)}, xs);
    b.output(b.node("Softmax", {big}, xs, {{"axis", int64_t{-1}}}));
    b.output(b.node("Softmax", {x}, xs, {{"axis", int64_t{2}}}));
    INFO("n = " << n);
    check_against_ref("onednn", b.g, 1e-5);
    const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
    INFO(listing(impls));
    if (onednn::host_softmax_available()) {
      CHECK(count_prefix(impls, "host:softmax") == 2);
      CHECK(count_prefix(impls, "softmax") == 0);
    }
  }
  FunctionBuilder b;   // over another axis: the primitive
  const Shape xs{2, 5, 4};
  b.output(b.node("Softmax", {b.input("x", xs)}, xs, {{"axis", int64_t{1}}}));
  check_against_ref("onednn", b.g, 1e-5);
  CHECK(count_prefix(onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations(), "host:softmax") == 0);
}
