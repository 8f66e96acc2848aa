// onednn: channels-last pointwise blocks (ConvNeXt). A MatMul against one matrix (2-D B) runs as one
// GEMM over all of A's rows, its batch dims folded into M (fold_rows in onednn_ops.cc); against
// constant weights a GEMM of rank 2, [rows, K] x [K, N], whose weights oneDNN packs once; and a
// Transpose between NCHW and NHWC of a value already in the other order is a view (no step).
// Fused chains and results against ref.
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_compiler.h"
#include "backends/onednn/onednn_program.h"
#include "backends/onednn/onednn_implementations.h"

using namespace tessera;
using tessera::testing::count_prefix;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using Dims = onednn::Dims;
using I = std::vector<int64_t>;

namespace {

// The dst dims of the program's matmul steps, in step order.
std::vector<Dims> matmul_dsts(const Graph& g) {
  const onednn::OnednnProgram p(g, dnnl::engine(dnnl::engine::kind::cpu, 0));
  const std::vector<std::string> impls = p.implementations();
  const std::vector<Dims> dims = p.dst_dims();
  std::vector<Dims> out;
  for (size_t i = 0; i < impls.size(); ++i)
    if (impls[i].rfind("matmul:", 0) == 0) out.push_back(dims[i]);
  return out;
}

}  // namespace

TEST_CASE("onednn: fold_rows folds A's batch dims into rows only against a 2-D B") {
  CHECK(onednn::fold_rows({1, 8, 8, 96}, 2) == Dims{1, 1, 64, 96});
  CHECK(onednn::fold_rows({2, 5, 16}, 2) == Dims{1, 10, 16});
  CHECK(onednn::fold_rows({1, 5, 16}, 2) == Dims{1, 5, 16});          // no batch: as it is
  CHECK(onednn::fold_rows({1, 1, 5, 16}, 2) == Dims{1, 1, 5, 16});
  CHECK(onednn::fold_rows({2, 5, 16}, 3) == Dims{2, 5, 16});          // B batched too
  CHECK(onednn::fold_rows({5, 16}, 2) == Dims{5, 16});
}

// ConvNeXt's pointwise block over [1, H, W, C]: MatMul + bias, erf-GELU, MatMul + bias.
TEST_CASE("onednn: a channels-last MatMul chain runs as GEMMs over every row, bias and GELU fused") {
  FunctionBuilder b;
  const Shape xs{1, 4, 6, 8}, hs{1, 4, 6, 32}, ys{1, 4, 6, 8};
  const ValueId x = b.input("x", xs);
  const ValueId h = b.node("Add", {b.node("MatMul", {x, b.input("w1", {8, 32})}, hs), b.input("b1", {32})}, hs);
  const ValueId e = b.node("Add", {b.node("Erf", {b.node("Div", {h, b.scalar("sqrt2", std::sqrt(2.0f))}, hs)}, hs),
                                   b.scalar("one", 1.0f)}, hs);
  const ValueId g = b.node("Mul", {b.node("Mul", {h, e}, hs), b.scalar("half", 0.5f)}, hs);
  b.output(b.node("Add", {b.node("MatMul", {g, b.input("w2", {32, 8})}, ys), b.input("b2", {8})}, ys));
  check_against_ref("onednn", b.g);
  CHECK(matmul_dsts(b.g) == std::vector<Dims>{{24, 32}, {24, 8}});   // rank 2: packed weights
  CHECK(count_prefix(b.g, "binary:") == 0);   // both biases are post-ops
  CHECK(count_prefix(b.g, "host:gelu_erf") == 1);
}

TEST_CASE("onednn: folded MatMul rows with a residual sum, a full-size operand and a batched B") {
  SECTION("residual Add: a sum post-op reading the residual with the folded dims") {
    FunctionBuilder b;
    const Shape xs{2, 3, 5, 16}, ys{2, 3, 5, 16};
    const ValueId x = b.input("x", xs);
    const ValueId r = b.node("Relu", {x}, xs);   // an internal residual
    const ValueId m = b.node("MatMul", {r, b.input("w", {16, 16})}, ys);
    b.output(b.node("Add", {b.node("Add", {m, b.input("bias", {16})}, ys), r}, ys));
    check_against_ref("onednn", b.g);
    CHECK(matmul_dsts(b.g) == std::vector<Dims>{{30, 16}});
  }
  SECTION("residual Add of a function input") {
    FunctionBuilder b;
    const Shape xs{3, 4, 16};
    const ValueId x = b.input("x", xs);
    b.output(b.node("Add", {x, b.node("MatMul", {x, b.input("w", {16, 16})}, xs)}, xs));
    check_against_ref("onednn", b.g);
    CHECK(matmul_dsts(b.g) == std::vector<Dims>{{12, 16}});
  }
  SECTION("an internal residual of rank 3 is summed into in place through the GEMM's rows") {
    FunctionBuilder b;
    const Shape xs{1, 12, 16};
    const ValueId r = b.node("Relu", {b.input("x", xs)}, xs);
    const ValueId h = b.node("Sigmoid", {r}, xs);   // what the MatMul reads: not the residual
    const ValueId m = b.node("Add", {b.node("MatMul", {h, b.input("w", {16, 16})}, xs), b.input("bias", {16})}, xs);
    b.output(b.node("MatMul", {b.node("Add", {m, r}, xs), b.input("w2", {16, 16})}, xs));
    check_against_ref("onednn", b.g);
    CHECK(matmul_dsts(b.g) == std::vector<Dims>{{12, 16}, {12, 16}});
    CHECK(count_prefix(b.g, "reorder:") == 0);   // no copy of the residual into the dst
    CHECK(count_prefix(b.g, "binary:") == 0);    // the bias a post-op at rank 2
  }
  SECTION("a bias that broadcasts over part of the leading dims stays apart, right") {
    FunctionBuilder b;
    const Shape xs{2, 3, 5, 8};
    const ValueId m = b.node("MatMul", {b.input("x", xs), b.input("w", {8, 8})}, xs);
    b.output(b.node("Add", {m, b.input("s", {1, 3, 1, 8})}, xs));
    check_against_ref("onednn", b.g);
  }
  SECTION("a full-size Mul operand and a Tanh after it") {
    FunctionBuilder b;
    const Shape xs{2, 5, 12}, ys{2, 5, 7};
    const ValueId m = b.node("MatMul", {b.input("x", xs), b.input("w", {12, 7})}, ys);
    b.output(b.node("Tanh", {b.node("Mul", {m, b.input("s", ys)}, ys)}, ys));
    check_against_ref("onednn", b.g);
  }
  SECTION("a 1-D B and a batched B keep their batches") {
    FunctionBuilder b;
    b.output(b.node("MatMul", {b.input("x", {2, 3, 6}), b.input("v", {6})}, {2, 3}));
    check_against_ref("onednn", b.g);
    FunctionBuilder bb;
    bb.output(bb.node("MatMul", {bb.input("x", {2, 3, 6}), bb.input("w", {2, 6, 4})}, {2, 3, 4}));
    check_against_ref("onednn", bb.g);
    CHECK(matmul_dsts(bb.g) == std::vector<Dims>{{2, 3, 4}});
  }
}

// ConvNeXt's block in one function: depthwise conv (nhwc) -> Transpose to [N,H,W,C] -> MatMuls
// -> Transpose back -> per-channel scale + residual -> the next depthwise conv. Both Transposes
// only relabel bytes already in the other order: no step for either (as copies they were two
// reorders more).
TEST_CASE("onednn: Transposes between NCHW and NHWC of values in the other order are views") {
  FunctionBuilder b;
  const Shape cs{1, 32, 6, 6}, ls{1, 6, 6, 32}, hs{1, 6, 6, 64};
  const ValueId x = b.input("x", cs);
  const ValueId r = b.node("Relu", {x}, cs);   // the residual, an internal value
  const ValueId d = b.node("Conv", {r, b.input("dw", {32, 1, 7, 7}), b.input("db", {32})}, cs,
                           {{"group", int64_t{32}}, {"pads", I{3, 3, 3, 3}}});
  const ValueId t = b.node("Transpose", {d}, ls, {{"perm", I{0, 2, 3, 1}}});
  const ValueId h = b.node("Relu", {b.node("MatMul", {t, b.input("w1", {32, 64})}, hs)}, hs);
  const ValueId m = b.node("MatMul", {h, b.input("w2", {64, 32})}, ls);
  const ValueId back = b.node("Transpose", {m}, cs, {{"perm", I{0, 3, 1, 2}}});
  const ValueId s = b.node("Add", {b.node("Mul", {back, b.input("gamma", {32, 1, 1})}, cs), r}, cs);
  b.output(b.node("Conv", {s, b.input("dw2", {32, 1, 3, 3})}, cs, {{"group", int64_t{32}}, {"pads", I{1, 1, 1, 1}}}));
  check_against_ref("onednn", b.g);
  const onednn::OnednnProgram p(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0));
  std::string text;
  size_t reorders = 0;
  for (const std::string& impl : p.implementations()) {
    text += impl + "\n";
    reorders += impl.rfind("reorder:", 0) == 0;
  }
  INFO(text);
  // The residual into the first conv's order and into the scale's dst (its sum post-op): only those.
  CHECK(reorders <= 2);
}

TEST_CASE("onednn: a Transpose of a value read elsewhere too, or of a function input, still copies") {
  SECTION("the MatMul output is also a function output") {
    FunctionBuilder b;
    const Shape ls{1, 4, 5, 8}, cs{1, 8, 4, 5};
    const ValueId m = b.node("MatMul", {b.input("x", {1, 4, 5, 6}), b.input("w", {6, 8})}, ls);
    b.output(m);
    b.output(b.node("Relu", {b.node("Transpose", {m}, cs, {{"perm", I{0, 3, 1, 2}}})}, cs));
    check_against_ref("onednn", b.g);
  }
  SECTION("read by the Transpose and by an Add summed into in place after it") {
    FunctionBuilder b;
    const Shape ls{1, 4, 5, 8}, cs{1, 8, 4, 5};
    const ValueId m = b.node("MatMul", {b.input("x", {1, 4, 5, 6}), b.input("w", {6, 8})}, ls);
    const ValueId t = b.node("Transpose", {m}, cs, {{"perm", I{0, 3, 1, 2}}});
    const ValueId c = b.node("Conv", {t, b.input("k", {8, 8, 1, 1})}, cs);
    const ValueId u = b.node("Transpose", {b.node("Add", {c, t}, cs)}, ls, {{"perm", I{0, 2, 3, 1}}});
    b.output(b.node("Add", {u, m}, ls));
    check_against_ref("onednn", b.g);
  }
  SECTION("a function input in NHWC order") {
    FunctionBuilder b;
    const Shape ls{1, 4, 5, 8}, cs{1, 8, 4, 5};
    const ValueId t = b.node("Transpose", {b.input("x", ls)}, cs, {{"perm", I{0, 3, 1, 2}}});
    b.output(b.node("Conv", {t, b.input("k", {8, 8, 1, 1})}, cs));
    check_against_ref("onednn", b.g);
  }
}
