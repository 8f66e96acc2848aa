// onednn compiled functions against ref, per op family, fused chains included.
#include "backends/compilers/conv_cases.h"
#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_compiler.h"
#include "backends/onednn/onednn_anchor.h"
#include "backends/onednn/onednn_program.h"
#include "onednn_implementations.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using tessera::testing::count_prefix;
using tessera::testing::listing;
using I = std::vector<int64_t>;

TEST_CASE("onednn: Conv with groups, pads, strides, dilations, bias and a relu post-op") {
  check_against_ref("onednn", tessera::testing::grouped_conv_relu());
}

TEST_CASE("onednn: depthwise Conv + Clip(0, 6), a residual Add and a conv chain") {
  FunctionBuilder b;
  const Shape xs{1, 16, 14, 14};
  const ValueId x = b.input("x", xs), wd = b.input("wd", {16, 1, 3, 3}), w1 = b.input("w1", {16, 16, 1, 1});
  const ValueId dw = b.node("Conv", {x, wd}, xs, {{"group", int64_t{16}}, {"pads", I{1, 1, 1, 1}}});
  const ValueId lo = b.scalar("lo", 0.0f), hi = b.scalar("hi", 6.0f);
  const ValueId r6 = b.node("Clip", {dw, lo, hi}, xs);
  const ValueId pw = b.node("Conv", {r6, w1}, xs);
  const ValueId add = b.node("Add", {pw, x}, xs);
  b.output(b.node("Relu", {add}, xs));
  check_against_ref("onednn", b.g);
}

TEST_CASE("onednn: Conv + constant bias Add + HardSwish, HardSigmoid and Sigmoid*x chains") {
  FunctionBuilder b;
  const Shape xs{1, 3, 8, 8}, ys{1, 8, 8, 8};
  const ValueId x = b.input("x", xs), w = b.input("w", {8, 3, 3, 3});
  std::vector<float> bias(8);
  for (int i = 0; i < 8; ++i) bias[static_cast<size_t>(i)] = 0.1f * static_cast<float>(i) - 0.3f;
  const ValueId bc = b.constant<float>("bias", DType::f32, {8, 1, 1}, bias);
  const ValueId c = b.node("Conv", {x, w}, ys, {{"pads", I{1, 1, 1, 1}}});
  const ValueId a = b.node("Add", {c, bc}, ys);
  const ValueId hs = b.node("HardSwish", {a}, ys);
  const ValueId hsig = b.node("HardSigmoid", {hs}, ys, {{"alpha", 0.25}, {"beta", 0.4}});
  b.output(hsig);
  const ValueId sg = b.node("Sigmoid", {x}, xs);
  b.output(b.node("Mul", {sg, x}, xs));
  check_against_ref("onednn", b.g);
}

TEST_CASE("onednn: a conv's chain of scalar Mul, Add, Sub, Div around Clip and Relu (eltwise post-ops)") {
  // Scalar binaries become eltwise_linear post-ops (one per run of consecutive ones); a second
  // linear or clip with other parameters later in the chain is not fused: oneDNN 2.7 on AVX2
  // applied every post-op of one algorithm with the first one's parameters.
  FunctionBuilder b;
  const Shape xs{1, 8, 6, 10}, ys{1, 16, 6, 10};
  const ValueId x = b.input("x", xs), w = b.input("w", {16, 8, 1, 1});
  auto scalar = [&](const char* name, float v) { return b.constant<float>(name, DType::f32, {}, {v}); };
  const ValueId c = b.node("Conv", {x, w}, ys);
  const ValueId m = b.node("Mul", {scalar("k", 3.7f), c}, ys);               // scalar on the left
  const ValueId s = b.node("Sub", {m, scalar("k2", 0.36f)}, ys);
  const ValueId cl = b.node("Clip", {s, scalar("lo", 0.0f), scalar("hi", 2.5f)}, ys);
  const ValueId d = b.node("Div", {cl, scalar("k3", -0.5f)}, ys);
  const ValueId r = b.node("Relu", {b.node("Sub", {scalar("k4", 0.25f), d}, ys)}, ys);
  b.output(b.node("Clip", {r, scalar("lo2", 0.0f), scalar("hi2", 4.0f)}, ys));
  check_against_ref("onednn", b.g);
}

TEST_CASE("onednn: ConvTranspose with stride, pads and output_padding") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 5, 5}), w = b.input("w", {4, 3, 3, 3});
  // out = 2*(5-1) + 1 + 3 - 1 - 1 = 10
  b.output(b.node("ConvTranspose", {x, w}, {1, 3, 10, 10},
                  {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"output_padding", I{1, 1}}}));
  check_against_ref("onednn", b.g);
}

TEST_CASE("onednn: batched MatMul with broadcast weights, bias Add and Tanh") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {2, 3, 5, 7}), w = b.input("w", {7, 4}), bias = b.input("bias", {4});
  const ValueId m = b.node("MatMul", {a, w}, {2, 3, 5, 4});
  const ValueId add = b.node("Add", {m, bias}, {2, 3, 5, 4});
  b.output(b.node("Tanh", {add}, {2, 3, 5, 4}));
  check_against_ref("onednn", b.g);
  FunctionBuilder bb;   // both operands batched activations
  const ValueId q = bb.input("q", {2, 4, 6, 8}), kt = bb.input("kt", {2, 4, 8, 6});
  bb.output(bb.node("MatMul", {q, kt}, {2, 4, 6, 6}));
  check_against_ref("onednn", bb.g);
}

TEST_CASE("onednn: Gemm with transB and bias, and Relu") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {6, 10}), w = b.input("w", {5, 10}), c = b.input("c", {5});
  const ValueId g = b.node("Gemm", {a, w, c}, {6, 5}, {{"transB", int64_t{1}}});
  b.output(b.node("Relu", {g}, {6, 5}));
  check_against_ref("onednn", b.g);
}

TEST_CASE("onednn: pooling (max with pads and ceil_mode, avg with and without pads counted, global)") {
  for (int64_t include : {0, 1}) {
    FunctionBuilder b;
    const ValueId x = b.input("x", {2, 3, 9, 9});
    b.output(b.node("MaxPool", {x}, {2, 3, 5, 5},
                    {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}));
    b.output(b.node("AveragePool", {x}, {2, 3, 5, 5},
                    {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}},
                     {"count_include_pad", include}}));
    b.output(b.node("MaxPool", {x}, {2, 3, 4, 4}, {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"ceil_mode", int64_t{1}}}));
    b.output(b.node("GlobalAveragePool", {x}, {2, 3, 1, 1}));
    check_against_ref("onednn", b.g);
  }
}

TEST_CASE("onednn: Softmax on two axes, LayerNormalization, BatchNormalization + Relu") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 5, 16});
  b.output(b.node("Softmax", {x}, {2, 5, 16}));
  b.output(b.node("Softmax", {x}, {2, 5, 16}, {{"axis", int64_t{1}}}));
  const ValueId s = b.input("scale", {16}), sh = b.input("shift", {16});
  b.output(b.node("LayerNormalization", {x, s, sh}, {2, 5, 16}, {{"epsilon", 1e-5}}));
  check_against_ref("onednn", b.g);

  FunctionBuilder bn;
  const ValueId y = bn.input("y", {1, 4, 6, 6});
  std::vector<ValueId> params;
  for (const char* n : {"gamma", "beta", "mean"}) params.push_back(bn.input(n, {4}));
  params.push_back(bn.constant<float>("var", DType::f32, {4}, {0.5f, 1.0f, 1.5f, 2.0f}));
  const ValueId norm = bn.node("BatchNormalization", {y, params[0], params[1], params[2], params[3]}, {1, 4, 6, 6});
  bn.output(bn.node("Relu", {norm}, {1, 4, 6, 6}));
  check_against_ref("onednn", bn.g);
}

TEST_CASE("onednn: binary ops with broadcasting, either side") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 3, 4}), v = b.input("v", {4}), c = b.input("c", {3, 1});
  b.output(b.node("Sub", {x, v}, {2, 3, 4}));
  b.output(b.node("Mul", {c, x}, {2, 3, 4}));
  b.output(b.node("Max", {x, c}, {2, 3, 4}));
  check_against_ref("onednn", b.g);
}

// Sub with a broadcast first operand: swapped to x - v, negated by an eltwise_linear post-op,
// and further post-ops still fuse after it.
TEST_CASE("onednn: Sub with its first operand broadcast, then a fused chain") {
  FunctionBuilder b;
  const ValueId v = b.input("v", {4}), x = b.input("x", {2, 3, 4}), c = b.input("c", {3, 1});
  const ValueId d = b.node("Sub", {v, x}, {2, 3, 4});
  b.output(b.node("Relu", {b.node("Mul", {d, c}, {2, 3, 4})}, {2, 3, 4}));
  check_against_ref("onednn", b.g);
}

TEST_CASE("onednn: ops oneDNN cannot do are KernelUnsupported") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 6});
  b.output(b.node("Erf", {x}, {2, 6}));   // no erf primitive (only inside a GELU)
  CHECK_THROWS_AS(make_backend_compiler("onednn")->compile(b.g), KernelUnsupported);
  FunctionBuilder s;   // Div needs its first operand broadcast: not expressible
  const ValueId v = s.input("v", {4}), m = s.input("m", {3, 4});
  s.output(s.node("Div", {v, m}, {3, 4}));
  CHECK_THROWS_AS(make_backend_compiler("onednn")->compile(s.g), KernelUnsupported);
  FunctionBuilder both;   // neither operand has the output's shape
  const ValueId r = both.input("r", {3, 1}), c = both.input("c", {1, 4});
  both.output(both.node("Add", {r, c}, {3, 4}));
  CHECK_THROWS_AS(make_backend_compiler("onednn")->compile(both.g), KernelUnsupported);
}

// Regression: fuse_chain copied the weak post_ops handle that primitive_attr::get_post_ops()
// returns, so a second fused post-op after an anchor given a temporary attribute (binary, pooling,
// softmax, ...) wrote into a freed attribute ("double free detected in tcache 2" / segfault).
TEST_CASE("onednn: layer norm tails Div+Mul+Add and Sqrt+Div+Mul+Add (bert_encoder regression)") {
  const Shape xs{1, 128, 256}, ss{1, 128, 1};
  FunctionBuilder b;
  const ValueId x = b.input("x", xs), s = b.input("s", ss);
  const ValueId g = b.input("gamma", {256}), be = b.input("beta", {256});
  const ValueId m = b.node("Mul", {b.node("Div", {x, s}, xs), g}, xs);
  b.output(b.node("Add", {m, be}, xs));
  check_against_ref("onednn", b.g);

  FunctionBuilder q;
  std::vector<float> var(128);   // positive: random inputs would give Sqrt NaNs
  for (size_t i = 0; i < var.size(); ++i) var[i] = 0.5f + 0.01f * static_cast<float>(i);
  const ValueId qx = q.input("x", xs), qv = q.constant<float>("var", DType::f32, ss, var);
  const ValueId qg = q.input("gamma", {256}), qb = q.input("beta", {256});
  const ValueId d = q.node("Div", {qx, q.node("Sqrt", {qv}, ss)}, xs);
  q.output(q.node("Add", {q.node("Mul", {d, qg}, xs), qb}, xs));
  check_against_ref("onednn", q.g);
}

TEST_CASE("onednn: pooling and softmax anchors with two fused post-ops") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 8, 8}), c = b.input("c", {1, 4, 1, 1});
  const ValueId p = b.node("MaxPool", {x}, {1, 4, 4, 4}, {{"kernel_shape", I{2, 2}}, {"strides", I{2, 2}}});
  b.output(b.node("Relu", {b.node("Add", {p, c}, {1, 4, 4, 4})}, {1, 4, 4, 4}));
  const ValueId y = b.input("y", {2, 16});
  const ValueId sm = b.node("Softmax", {y}, {2, 16});
  b.output(b.node("Sqrt", {b.node("Exp", {sm}, {2, 16})}, {2, 16}));
  check_against_ref("onednn", b.g);
}

namespace {

// The spellings of the two means and of the square in an exported layer norm.
struct LayerNormSpelling {
  bool pooled = false;   // GlobalAveragePool of a rank-3 value (import's form of ReduceMean over axis 2), not ReduceMean
  bool mul = false;      // Mul(d, d), not Pow(d, 2)
};

// The exported (decomposed) layer norm of x over its last axis, with gamma and beta.
ValueId decomposed_layer_norm(FunctionBuilder& b, ValueId x, ValueId gamma, ValueId beta, LayerNormSpelling how = {}) {
  const Shape xs = b.g.value(x).type.shape;
  Shape rs = xs;
  rs.back() = 1;
  auto mean = [&](ValueId v) {
    return how.pooled ? b.node("GlobalAveragePool", {v}, rs) : b.node("ReduceMean", {v}, rs, {{"axes", I{-1}}});
  };
  const ValueId d = b.node("Sub", {x, mean(x)}, xs);
  const ValueId v = mean(how.mul ? b.node("Mul", {d, d}, xs) : b.node("Pow", {d, b.scalar("two", 2.0f)}, xs));
  const ValueId s = b.node("Sqrt", {b.node("Add", {v, b.scalar("eps", 1e-5f)}, rs)}, rs);
  const ValueId y = b.node("Div", {d, s}, xs);
  return b.node("Add", {b.node("Mul", {y, gamma}, xs), beta}, xs);
}

}  // namespace

TEST_CASE("onednn: decomposed layer norm runs as one layer_normalization primitive") {
  const Shape xs{1, 16, 32};
  FunctionBuilder b;
  const ValueId x = b.input("x", xs), r = b.input("residual", xs);
  const ValueId g = b.input("gamma", {32}), be = b.input("beta", {32});
  b.output(decomposed_layer_norm(b, b.node("Add", {x, r}, xs), g, be));
  check_against_ref("onednn", b.g);   // compiles at all only as a group: ReduceMean and Pow have no primitive here

  FunctionBuilder q;   // axes over two dims: not a layer norm oneDNN runs; ReduceMean stays unsupported
  const ValueId qx = q.input("x", xs);
  const ValueId m = q.node("ReduceMean", {qx}, {1, 1, 1}, {{"axes", I{1, 2}}});
  q.output(q.node("Sub", {qx, m}, xs));
  CHECK_THROWS_AS(make_onednn_compiler()->compile(q.g), KernelUnsupported);
}

// The other spellings: BERT's and every transformer's [1, S, H] layer norm reaches the compiler
// with GlobalAveragePool means (simplify_graph's rewrite of a ReduceMean over axis 2 of a rank-3
// value), and some exporters square with Mul(d, d). Each is one primitive, no pooling, binary or
// eltwise step left over.
TEST_CASE("onednn: a layer norm with GlobalAveragePool means or a Mul square is one primitive") {
  const Shape xs{1, 16, 32};
  for (const LayerNormSpelling how : {LayerNormSpelling{true, false}, LayerNormSpelling{false, true}, LayerNormSpelling{true, true}}) {
    CAPTURE(how.pooled, how.mul);
    FunctionBuilder b;
    const ValueId x = b.input("x", xs), r = b.input("residual", xs);
    const ValueId g = b.input("gamma", {32}), be = b.input("beta", {32});
    b.output(decomposed_layer_norm(b, b.node("Add", {x, r}, xs), g, be, how));
    check_against_ref("onednn", b.g);
    const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
    INFO(listing(impls));
    CHECK(count_prefix(impls, "layer_normalization") == 1);
    CHECK(count_prefix(impls, "pooling") == 0);
    CHECK(impls.size() <= 2);   // the residual Add and the layer norm
  }
  FunctionBuilder q;   // a pool over two spatial axes is no mean over the last one: pooling stays
  const Shape ys{1, 4, 8, 8};
  const ValueId qx = q.input("x", ys);
  q.output(q.node("Sub", {qx, q.node("GlobalAveragePool", {qx}, {1, 4, 1, 1})}, ys));
  const std::vector<std::string> impls = onednn::OnednnProgram(q.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  CHECK(count_prefix(impls, "layer_normalization") == 0);
}

// erf-GELU after a MatMul + bias (BERT's feed-forward): the bias a post-op, the GELU the host pass
// over the MatMul's output (onednn_host_eltwise.h: oneDNN's gelu_erf costs about twice Eigen's).
TEST_CASE("onednn: erf-GELU after a MatMul + bias is the host pass, in each exported order") {
  size_t bare_workspace = 0;   // MatMul + bias alone: the GELU as a post-op adds no buffer
  {
    FunctionBuilder b;
    const ValueId a = b.input("a", {8, 16}), w = b.input("w", {16, 24}), bias = b.input("bias", {24});
    b.output(b.node("Add", {bias, b.node("MatMul", {a, w}, {8, 24})}, {8, 24}));
    bare_workspace = make_onednn_compiler()->compile(b.g)->workspace_bytes();
  }
  for (int order = 0; order < 3; ++order) {
    FunctionBuilder b;
    const ValueId a = b.input("a", {8, 16}), w = b.input("w", {16, 24}), bias = b.input("bias", {24});
    const Shape ys{8, 24};
    const ValueId x = b.node("Add", {bias, b.node("MatMul", {a, w}, ys)}, ys);
    const ValueId e = b.node("Add", {b.node("Erf", {b.node("Div", {x, b.scalar("sqrt2", std::sqrt(2.0f))}, ys)}, ys),
                                     b.scalar("one", 1.0f)}, ys);
    const ValueId half = b.scalar("half", 0.5f);
    ValueId y;
    if (order == 0) y = b.node("Mul", {b.node("Mul", {x, e}, ys), half}, ys);        // torch's export
    else if (order == 1) y = b.node("Mul", {b.node("Mul", {x, half}, ys), e}, ys);   // 0.5 * x first
    else y = b.node("Mul", {x, b.node("Mul", {e, half}, ys)}, ys);
    b.output(y);
    INFO("order " << order);
    check_against_ref("onednn", b.g);
    auto fn = make_onednn_compiler()->compile(b.g);
    // MatMul writes y directly and the pass runs over it: no buffer for x, only the frame's scalars.
    CHECK(fn->workspace_bytes() < bare_workspace + 8 * 24 * 4);
    const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
    INFO(listing(impls));
    CHECK(count_prefix(impls, "matmul:") == 1);
    CHECK(count_prefix(impls, "host:gelu_erf") == 1);
    CHECK(count_prefix(impls, "eltwise:") == 0);
  }
  FunctionBuilder b;   // a GELU alone: one eltwise primitive
  const Shape xs{4, 40};
  const ValueId x = b.input("x", xs);
  const ValueId e = b.node("Add", {b.scalar("one", 1.0f),
                                   b.node("Erf", {b.node("Mul", {x, b.scalar("r", std::sqrt(0.5f))}, xs)}, xs)}, xs);
  b.output(b.node("Mul", {b.node("Mul", {x, e}, xs), b.scalar("half", 0.5f)}, xs));
  check_against_ref("onednn", b.g);
}

namespace {

ValueId shape_of(FunctionBuilder& b, I dims) {
  return b.constant<int64_t>("shape" + std::to_string(b.g.values.size()), DType::i64, {int64_t(dims.size())}, dims);
}

}  // namespace

TEST_CASE("onednn: Reshape views and Transpose reorders (attention's head split)") {
  FunctionBuilder b;   // head split: [1,8,16] -> [1,8,2,8] -> [1,2,8,8] and [1,2,8,8] (k transposed)
  const ValueId x = b.input("x", {1, 8, 16});
  const ValueId r = b.node("Reshape", {x, shape_of(b, {1, 8, 2, 8})}, {1, 8, 2, 8});
  b.output(b.node("Transpose", {r}, {1, 2, 8, 8}, {{"perm", I{0, 2, 1, 3}}}));
  b.output(b.node("Transpose", {r}, {1, 2, 8, 8}, {{"perm", I{0, 2, 3, 1}}}));
  check_against_ref("onednn", b.g);
}

TEST_CASE("onednn: Transpose + Reshape into a function output (attention's head merge), Flatten") {
  FunctionBuilder m;   // head merge: Transpose + Reshape into the function output, and a Reshape output
  const ValueId h = m.input("h", {1, 2, 8, 8});
  const ValueId t = m.node("Transpose", {h}, {1, 8, 2, 8}, {{"perm", I{0, 2, 1, 3}}});
  m.output(m.node("Reshape", {t, shape_of(m, {1, 8, 16})}, {1, 8, 16}));
  m.output(m.node("Flatten", {m.node("Relu", {h}, {1, 2, 8, 8})}, {1, 128}, {{"axis", int64_t(1)}}));
  check_against_ref("onednn", m.g);
}

TEST_CASE("onednn: Concat of blocked conv outputs (fire module) and of plain inputs") {
  FunctionBuilder c;   // Concat of two blocked conv outputs (fire module) and of plain inputs
  const ValueId cx = c.input("x", {1, 16, 6, 6}), w1 = c.input("w1", {32, 16, 1, 1}), w3 = c.input("w3", {32, 16, 3, 3});
  const ValueId e1 = c.node("Relu", {c.node("Conv", {cx, w1}, {1, 32, 6, 6})}, {1, 32, 6, 6});
  const ValueId e3 = c.node("Relu", {c.node("Conv", {cx, w3}, {1, 32, 6, 6}, {{"pads", I{1, 1, 1, 1}}})}, {1, 32, 6, 6});
  c.output(c.node("Concat", {e1, e3}, {1, 64, 6, 6}, {{"axis", int64_t(1)}}));
  const ValueId p = c.input("p", {3, 5}), q = c.input("q", {3, 2});
  c.output(c.node("Concat", {p, q}, {3, 7}, {{"axis", int64_t(-1)}}));
  check_against_ref("onednn", c.g);
}

namespace {

// Whether this CPU's oneDNN has a Winograd kernel for a 3x3 pad-1 convolution, c -> o channels, hw x hw.
bool winograd_available(int64_t c, int64_t o, int64_t hw) {
  using dnnl::memory;
  auto md = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); };
  try {
    dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd, md({1, c, hw, hw}),
                                        md({o, c, 3, 3}), md({o}), md({1, o, hw, hw}), {1, 1}, {0, 0}, {1, 1}, {1, 1}),
        dnnl::engine(dnnl::engine::kind::cpu, 0));
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

// A dense 3x3 stride-1 convolution runs Winograd wherever oneDNN has a kernel for it (onednn_ops.cc),
// a strided one stays direct; with a residual Add and a Relu after the first, against ref.
TEST_CASE("onednn: 3x3 stride-1 convolutions take Winograd where oneDNN has it, post-ops kept") {
  FunctionBuilder b;
  const Shape xs{1, 32, 14, 14}, hs{1, 32, 7, 7};
  const ValueId x = b.input("x", xs), w = b.input("w", {32, 32, 3, 3}), bias = b.input("bias", {32});
  const ValueId w2 = b.input("w2", {32, 32, 3, 3});
  const ValueId conv = b.node("Conv", {x, w, bias}, xs, {{"pads", I{1, 1, 1, 1}}});
  const ValueId sum = b.node("Relu", {b.node("Add", {conv, x}, xs)}, xs);
  b.output(b.node("Conv", {sum, w2}, hs, {{"pads", I{1, 1, 1, 1}}, {"strides", I{2, 2}}}));
  check_against_ref("onednn", b.g);

  const bool has_winograd = winograd_available(32, 32, 14);
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO("has Winograd: " << has_winograd);
  INFO(listing(impls));
  int wino = 0, convs = 0;
  for (const std::string& impl : impls) {
    wino += impl.find("wino") != std::string::npos;
    convs += impl.rfind("convolution:", 0) == 0;
  }
  CHECK(wino == (has_winograd ? 1 : 0));   // the strided convolution never
  CHECK(convs == 2);
}

// Channel blocks kept (onednn_ops.cc, onednn_ops_layout.cc): a conv whose source a Winograd conv
// wrote in blocks reads and writes those blocks, and a fire module's Concat of a blocked and an
// nhwc conv output is host copies of whole blocks, so no reorder runs between them: one step
// reorders x into blocks (the output's reorder is a final one, not a step). Under format any the
// 1x1 convs pick nhwc, and a reorder goes on each side of them; oneDNN's concat of mixed layouts
// is its reference kernel.
TEST_CASE("onednn: convs after a Winograd conv keep its channel blocks, through a fire module's Concat") {
  FunctionBuilder b;
  const Shape xs{1, 32, 14, 14}, hs{1, 16, 14, 14}, es{1, 32, 14, 14}, ys{1, 64, 14, 14};
  const ValueId x = b.input("x", xs), w = b.input("w", {32, 32, 3, 3});
  const ValueId ws = b.input("ws", {16, 32, 1, 1}), we1 = b.input("we1", {32, 16, 1, 1}), we3 = b.input("we3", {32, 16, 3, 3});
  const ValueId c3 = b.node("Relu", {b.node("Conv", {x, w}, xs, {{"pads", I{1, 1, 1, 1}}})}, xs);
  const ValueId sq = b.node("Relu", {b.node("Conv", {c3, ws}, hs)}, hs);
  const ValueId e1 = b.node("Relu", {b.node("Conv", {sq, we1}, es)}, es);
  const ValueId e3 = b.node("Relu", {b.node("Conv", {sq, we3}, es, {{"pads", I{1, 1, 1, 1}}})}, es);
  const ValueId cat = b.node("Concat", {e1, e3}, ys, {{"axis", int64_t(1)}});
  b.output(b.node("Relu", {b.node("Conv", {cat, b.input("wo", {16, 64, 1, 1})}, hs)}, hs));
  check_against_ref("onednn", b.g);

  if (!winograd_available(32, 32, 14)) return;   // no blocks to keep: every conv picks its own layout
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO(listing(impls));
  CHECK(count_prefix(impls, "convolution:") == 5);
  CHECK(count_prefix(impls, "concat:") == 0);
  CHECK(count_prefix(impls, "reorder:") == 1);
}

// SiLU, x * Sigmoid(x) (EfficientNet's activation, in both operand orders), after a conv leaves
// the conv bare and runs as the host pass over its output (onednn_swish_pass.h: oneDNN's swish
// post-op costs about twice as much); alone (no anchor before it) it is one eltwise primitive.
// Run op by op it was an eltwise pass and a binary pass over the conv's output.
TEST_CASE("onednn: SiLU after a Conv is the host pass over its output; alone one eltwise") {
  for (const bool sig_first : {true, false}) {
    FunctionBuilder b;
    const Shape xs{1, 8, 10, 10}, ys{1, 16, 10, 10};
    const ValueId x = b.input("x", xs), w = b.input("w", {16, 8, 1, 1}), bias = b.input("bias", {16});
    const ValueId y = b.node("Conv", {x, w, bias}, ys);
    const ValueId s = b.node("Sigmoid", {y}, ys);
    b.output(b.node("Mul", sig_first ? std::vector<ValueId>{s, y} : std::vector<ValueId>{y, s}, ys));
    const ValueId u = b.input("u", {2, 24});   // SiLU with no anchor before it
    b.output(b.node("Mul", {u, b.node("Sigmoid", {u}, {2, 24})}, {2, 24}));
    check_against_ref("onednn", b.g);
    const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
    INFO(listing(impls));
    CHECK(count_prefix(impls, "convolution:") == 1);
    CHECK(count_prefix(impls, "host:silu") == 1);
    CHECK(count_prefix(impls, "eltwise:") == 1);
    CHECK(count_prefix(impls, "binary:") == 0);
  }
}

// The pass after a residual sum (SiLU(conv + r)), over 256 K values (OpenMP's team shares them);
// a SiLU the chain goes on after (SiLU(conv) + r) stays oneDNN's post-op: a pass cannot run
// between two post-ops.
TEST_CASE("onednn: SiLU after a residual sum is the host pass; one the chain goes on after is a post-op") {
  FunctionBuilder b;
  const Shape xs{1, 16, 128, 128};
  const ValueId x = b.input("x", xs), w = b.input("w", {16, 16, 1, 1}), r = b.input("r", xs);
  const ValueId y = b.node("Add", {b.node("Conv", {x, w}, xs), r}, xs);
  const ValueId silu = b.node("Mul", {y, b.node("Sigmoid", {y}, xs)}, xs);
  const ValueId y2 = b.node("Conv", {silu, b.input("w2", {16, 16, 1, 1})}, xs);
  b.output(b.node("Add", {b.node("Mul", {y2, b.node("Sigmoid", {y2}, xs)}, xs), r}, xs));
  check_against_ref("onednn", b.g);
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO(listing(impls));
  CHECK(count_prefix(impls, "convolution:") == 2);
  CHECK(count_prefix(impls, "host:silu") == 1);
}

// Slice and Split are reorders of a window of the value's own memory (onednn_ops_layout.cc): a
// channel split of a conv's nhwc output (ShuffleNet's units) stays nhwc for the convs after it; a
// Slice of a function input reads the bound input; negative starts count from the end; opset 1's
// attributes; a Split into unequal parts.
TEST_CASE("onednn: Slice and Split as windows of nhwc, blocked and plain values") {
  FunctionBuilder b;
  const Shape xs{1, 16, 6, 6}, hs{1, 8, 6, 6};
  const ValueId x = b.input("x", xs), w = b.input("w", {32, 16, 1, 1}), w2 = b.input("w2", {8, 8, 1, 1});
  const ValueId c = b.node("Relu", {b.node("Conv", {x, w}, {1, 32, 6, 6})}, {1, 32, 6, 6});
  const ValueId lo = b.node("Slice", {c, shape_of(b, {0}), shape_of(b, {8}), shape_of(b, {1})}, hs);
  const ValueId hi = b.node("Slice", {c, shape_of(b, {-8}), shape_of(b, {1000}), shape_of(b, {-3}), shape_of(b, {1})}, hs);
  b.output(b.node("Add", {b.node("Conv", {lo, w2}, hs), hi}, hs));
  const ValueId u = b.input("u", {3, 10});
  b.output(b.node("Slice", {u}, {2, 4}, {{"starts", I{1, 3}}, {"ends", I{3, 7}}}));
  Node split;   // Split(x) -> [1,4,6,6], [1,12,6,6]
  split.name = split.op = "Split";
  split.attrs = {{"axis", int64_t(1)}, {"split", I{4, 12}}};
  split.inputs = {x};
  for (const int64_t ch : {4, 12})
    split.outputs.push_back(b.g.add_value(Value{"part" + std::to_string(ch), TensorType{DType::f32, {1, ch, 6, 6}}, ValueKind::Intermediate}));
  b.g.add_node(split);
  for (const ValueId part : split.outputs) b.output(part);
  check_against_ref("onednn", b.g);
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO(listing(impls));
  CHECK(count_prefix(impls, "reorder:") >= 5);   // two Slices of c, the Slice of u, two Split outputs
}

TEST_CASE("onednn: reshape_strides shows a reshape as strides where no copy is needed") {
  using onednn::Dims;
  const Dims nhwc{45472, 1, 3248, 232};   // [1,232,14,14] in nhwc
  // A channel split: C (stride 1) into [2,116].
  CHECK(onednn::reshape_strides({1, 232, 14, 14}, nhwc, {1, 2, 116, 14, 14}) == Dims{45472, 116, 1, 3248, 232});
  // Merging [116,2] with strides [2,1] back into C: the nhwc result of the shuffle.
  CHECK(onednn::reshape_strides({1, 116, 2, 14, 14}, {45472, 2, 1, 3248, 232}, {1, 232, 14, 14}) == nhwc);
  // Merging H and W of nhwc is contiguous ([N,C,H*W] for a sequence); merging C with H is not.
  CHECK(onednn::reshape_strides({1, 232, 14, 14}, nhwc, {1, 232, 196}) == Dims{45472, 1, 232});
  CHECK_FALSE(onednn::reshape_strides({1, 232, 14, 14}, nhwc, {1, 232 * 14, 14}));
  // Plain in, plain out; dims of 1 anywhere.
  CHECK(onednn::reshape_strides({2, 3, 4}, {12, 4, 1}, {6, 1, 4}) == Dims{4, 24, 1});
  CHECK(onednn::reshape_strides({1, 1}, {1, 1}, {1}) == Dims{1});
}

// ShuffleNet's unit tail on nhwc values (conv outputs): the channel shuffle's Transpose reads the
// nhwc Concat through strides and writes nhwc, so the split and the conv after it read it as is.
// Before, the Concat went to plain, the Transpose wrote plain, and the conv's half came back to nhwc.
TEST_CASE("onednn: a channel shuffle of nhwc values stays nhwc") {
  FunctionBuilder b;
  const Shape half{1, 16, 6, 6}, whole{1, 32, 6, 6};
  const ValueId x = b.input("x", half), w = b.input("w", {16, 16, 1, 1}), w2 = b.input("w2", {16, 16, 1, 1});
  const ValueId c1 = b.node("Relu", {b.node("Conv", {x, w}, half)}, half);
  const ValueId c2 = b.node("Relu", {b.node("Conv", {x, w2}, half)}, half);
  const ValueId cat = b.node("Concat", {c1, c2}, whole, {{"axis", int64_t(1)}});
  const ValueId r = b.node("Reshape", {cat, shape_of(b, {1, 2, 16, 6, 6})}, {1, 2, 16, 6, 6});
  const ValueId t = b.node("Transpose", {r}, {1, 16, 2, 6, 6}, {{"perm", I{0, 2, 1, 3, 4}}});
  const ValueId s = b.node("Reshape", {t, shape_of(b, {1, 32, 6, 6})}, whole);
  const ValueId lo = b.node("Slice", {s, shape_of(b, {0}), shape_of(b, {16}), shape_of(b, {1})}, half);
  const ValueId hi = b.node("Slice", {s, shape_of(b, {16}), shape_of(b, {32}), shape_of(b, {1})}, half);
  b.output(b.node("Add", {lo, b.node("Conv", {hi, w2}, half)}, half));
  check_against_ref("onednn", b.g);
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO(listing(impls));
  // The conv on the nhwc half (36 pixels) runs as a matmul of pixel rows (onednn_pointwise.cc).
  CHECK(count_prefix(impls, "convolution:") + count_prefix(impls, "matmul:") == 3);
  // x to the convs' layout, the shuffle, the two halves, the output back to plain; on CPUs where
  // oneDNN's 1x1 convs want channel blocks instead of nhwc, the layout checks above decide nothing.
  CHECK(count_prefix(impls, "reorder:") <= 5);
}

// The decomposed HardSwish spellings (onednn_patterns.h) after a conv's learnable affine, and the
// affine after it (PaddleOCR's PP-LCNetV3 blocks: Conv, * a1 + b1, HardSwish, * a2 + b2): one
// convolution with its post-ops, no eltwise or binary primitive of its own. The second affine
// cannot be a second eltwise_linear post-op (append_eltwise_checked): binary post-ops with
// scalar operands instead.
TEST_CASE("onednn: decomposed HardSwish between two scalar affines is one conv with post-ops") {
  enum class Spelling { clip_attrs_div, clip_inputs_mul_sixth, sixth_before_product, hard_sigmoid };
  for (const Spelling sp : {Spelling::clip_attrs_div, Spelling::clip_inputs_mul_sixth, Spelling::sixth_before_product,
                            Spelling::hard_sigmoid}) {
    INFO("spelling " << static_cast<int>(sp));
    FunctionBuilder b;
    const Shape xs{1, 8, 6, 10}, ys{1, 16, 6, 10};
    const ValueId x = b.input("x", xs), w = b.input("w", {16, 8, 1, 1});
    auto k = [&](const char* name, float v) { return b.constant<float>(name, DType::f32, {}, {v}); };
    const ValueId c = b.node("Conv", {x, w}, ys);
    const ValueId y = b.node("Add", {b.node("Mul", {k("a1", 0.8f), c}, ys), k("b1", -0.3f)}, ys);
    ValueId hs;
    if (sp == Spelling::hard_sigmoid) {
      const ValueId g = b.node("HardSigmoid", {y}, ys, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
      hs = b.node("Mul", {y, g}, ys);
    } else {
      const ValueId plus3 = b.node("Add", {y, k("three", 3.0f)}, ys);
      const ValueId clip = sp == Spelling::clip_attrs_div
                               ? b.node("Clip", {plus3}, ys, {{"min", 0.0}, {"max", 6.0}})
                               : b.node("Clip", {plus3, k("lo", 0.0f), k("hi", 6.0f)}, ys);
      if (sp == Spelling::sixth_before_product)
        hs = b.node("Mul", {b.node("Div", {clip, k("six", 6.0f)}, ys), y}, ys);
      else if (sp == Spelling::clip_inputs_mul_sixth)
        hs = b.node("Mul", {b.node("Mul", {y, clip}, ys), k("sixth", 1.0f / 6.0f)}, ys);
      else
        hs = b.node("Div", {b.node("Mul", {y, clip}, ys), k("six", 6.0f)}, ys);
    }
    b.output(b.node("Add", {b.node("Mul", {k("a2", 1.7f), hs}, ys), k("b2", 0.25f)}, ys));
    check_against_ref("onednn", b.g);
    const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
    INFO(listing(impls));
    CHECK(count_prefix(impls, "convolution:") == 1);
    CHECK(count_prefix(impls, "eltwise:") == 0);
    CHECK(count_prefix(impls, "binary:") == 0);
  }
}

// A MobileNet/EfficientNet block: 1x1 expand, depthwise 3x3, squeeze-and-excitation (global pool,
// two 1x1 convs, Sigmoid, the per-channel Mul), 1x1 project, then the network's head (a global
// pool). On AVX-512 the depthwise conv starts channel blocks (oneDNN's jit_dw) and everything
// after it keeps them: the SE Mul reads its per-channel scale in the same blocks (jit binary)
// instead of reordering the block to plain.
TEST_CASE("onednn: a depthwise block with squeeze-and-excitation runs in channel blocks") {
  FunctionBuilder b;
  const Shape xs{1, 16, 14, 14}, es{1, 32, 14, 14}, ps{1, 32, 1, 1}, qs{1, 8, 1, 1};
  const ValueId x = b.input("x", xs);
  const ValueId e = b.node("Relu", {b.node("Conv", {x, b.input("we", {32, 16, 1, 1})}, es)}, es);
  const ValueId d = b.node("Relu", {b.node("Conv", {e, b.input("wd", {32, 1, 3, 3})}, es,
                                           {{"group", int64_t(32)}, {"pads", I{1, 1, 1, 1}}})}, es);
  const ValueId p = b.node("GlobalAveragePool", {d}, ps);
  const ValueId q = b.node("Relu", {b.node("Conv", {p, b.input("w1", {8, 32, 1, 1})}, qs)}, qs);
  const ValueId s = b.node("Sigmoid", {b.node("Conv", {q, b.input("w2", {32, 8, 1, 1})}, ps)}, ps);
  const ValueId m = b.node("Mul", {d, s}, es);
  b.output(b.node("GlobalAveragePool", {b.node("Conv", {m, b.input("wp", {16, 32, 1, 1})}, xs)}, {1, 16, 1, 1}));
  check_against_ref("onednn", b.g);
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO(listing(impls));
  CHECK(count_prefix(impls, "binary:ref") == 0);
  if (onednn::avx512_blocks()) {
    CHECK(count_prefix(impls, "convolution:jit_dw") == 1);
    // x into the expand conv's layout, e into blocks, the pooled output to plain.
    CHECK(count_prefix(impls, "reorder:") <= 3);
  }
}

// MobileNet's stem: a strided 3x3 conv of the 3-channel image, ReLU6, then the first depthwise
// conv, whose blocks last (a 1x1 project and the head's global pool after it). The stem writes
// the blocks itself, so no reorder runs between it and the depthwise conv.
TEST_CASE("onednn: the conv in front of a depthwise conv that starts blocks writes them") {
  FunctionBuilder b;
  const Shape xs{1, 3, 32, 32}, ys{1, 32, 16, 16}, ps{1, 16, 16, 16};
  const ValueId x = b.input("x", xs);
  const ValueId stem = b.node("Conv", {x, b.input("ws", {32, 3, 3, 3})}, ys,
                              {{"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}});
  const ValueId r6 = b.node("Clip", {stem}, ys, {{"min", 0.0}, {"max", 6.0}});
  const ValueId d = b.node("Conv", {r6, b.input("wd", {32, 1, 3, 3})}, ys, {{"group", int64_t(32)}, {"pads", I{1, 1, 1, 1}}});
  const ValueId p = b.node("Conv", {b.node("Clip", {d}, ys, {{"min", 0.0}, {"max", 6.0}}), b.input("wp", {16, 32, 1, 1})}, ps);
  b.output(b.node("GlobalAveragePool", {p}, {1, 16, 1, 1}));
  check_against_ref("onednn", b.g);
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO(listing(impls));
  if (onednn::avx512_blocks()) {
    CHECK(count_prefix(impls, "convolution:jit_dw") == 1);
    // None between the convs (the stem reads the plain image here): 2 when the depthwise conv
    // reorders the stem's nhwc output into blocks (and x goes to nhwc for it).
    CHECK(count_prefix(impls, "reorder:") <= 1);
  }
}

// ShuffleNet's unit: a half of the channels through 1x1, depthwise 3x3, 1x1, concatenated with
// the other half (a 1x1 conv's nhwc output here), then shuffled. Blocks started at the depthwise conv
// would not last to the next one: the Concat would mix a blocked and an nhwc input and the
// shuffle reorder them back (in shufflenet_v2, 16 ref concats and 80 reorders). So the depthwise
// conv keeps format any.
TEST_CASE("onednn: a depthwise conv whose blocks would not last keeps format any") {
  FunctionBuilder b;
  const Shape half{1, 16, 14, 14}, whole{1, 32, 14, 14};
  const ValueId x = b.input("x", half);
  const ValueId keep = b.node("Relu", {b.node("Conv", {b.input("y", half), b.input("wk", {16, 16, 1, 1})}, half)}, half);
  const ValueId e = b.node("Relu", {b.node("Conv", {x, b.input("we", {16, 16, 1, 1})}, half)}, half);
  const ValueId d = b.node("Conv", {e, b.input("wd", {16, 1, 3, 3})}, half, {{"group", int64_t(16)}, {"pads", I{1, 1, 1, 1}}});
  const ValueId p = b.node("Relu", {b.node("Conv", {d, b.input("wp", {16, 16, 1, 1})}, half)}, half);
  const ValueId cat = b.node("Concat", {keep, p}, whole, {{"axis", int64_t(1)}});
  const ValueId r = b.node("Reshape", {cat, shape_of(b, {1, 2, 16, 14, 14})}, {1, 2, 16, 14, 14});
  const ValueId t = b.node("Transpose", {r}, {1, 16, 2, 14, 14}, {{"perm", I{0, 2, 1, 3, 4}}});
  b.output(b.node("Reshape", {t, shape_of(b, {1, 32, 14, 14})}, whole));
  check_against_ref("onednn", b.g);
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO(listing(impls));
  CHECK(count_prefix(impls, "concat:ref") == 0);
  CHECK(count_prefix(impls, "convolution:jit_dw") == 0);
}

// ResNeXt's bottleneck: 1x1, a 32-group 3x3 (8 channels per group), 1x1, and one more 1x1 behind
// it. The grouped conv reads and writes the 1x1 convs' nhwc (grouped_nhwc) instead of picking
// blocks of its group width under format any, which cost a reorder on each side; and blocks of 8,
// were they picked, are not kept on AVX-512, whose kernels for them are oneDNN's AVX2 ones.
TEST_CASE("onednn: a grouped conv between nhwc 1x1 convs stays nhwc, no AVX2 kernels on AVX-512") {
  for (const int64_t width : {int64_t(4), int64_t(8)}) {
    CAPTURE(width);
    FunctionBuilder b;
    const int64_t c = 32 * width;
    const Shape xs{1, 64, 14, 14}, ms{1, c, 14, 14}, ys{1, 128, 14, 14};
    const ValueId x = b.input("x", xs);
    const ValueId e = b.node("Relu", {b.node("Conv", {x, b.input("we", {c, 64, 1, 1})}, ms)}, ms);
    const ValueId g = b.node("Relu", {b.node("Conv", {e, b.input("wg", {c, width, 3, 3})}, ms,
                                             {{"group", int64_t(32)}, {"pads", I{1, 1, 1, 1}}})}, ms);
    const ValueId p = b.node("Relu", {b.node("Conv", {g, b.input("wp", {128, c, 1, 1})}, ys)}, ys);
    b.output(b.node("Conv", {p, b.input("wq", {128, 128, 1, 1})}, ys));
    check_against_ref("onednn", b.g, 1e-3);   // four convs deep, sums of up to 256 terms each
    const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
    INFO(listing(impls));
    CHECK(count_prefix(impls, "convolution:ref") == 0);
    if (onednn::avx512_blocks()) {
      for (const std::string& impl : impls) CHECK(impl.find("avx2") == std::string::npos);
      // x into the 1x1 convs' layout only: none around the grouped conv.
      CHECK(count_prefix(impls, "reorder:") <= 1);
    }
  }
}

// A residual block whose residual (r) nothing reads after the Add: the block's last conv's sum
// post-op accumulates into r's own buffer (residual_in_place) instead of into a copy of it, so no
// reorder copies r. x reaches the convs' layout by one reorder.
TEST_CASE("onednn: a residual read last by its Add is summed into in place, not copied") {
  FunctionBuilder b;
  const Shape s{1, 32, 8, 8};
  const ValueId x = b.input("x", s);
  const ValueId r = b.node("Relu", {b.node("Conv", {x, b.input("w0", {32, 32, 1, 1})}, s)}, s);
  const ValueId h = b.node("Relu", {b.node("Conv", {r, b.input("w1", {32, 32, 1, 1})}, s)}, s);
  const ValueId y = b.node("Relu", {b.node("Add", {b.node("Conv", {h, b.input("w2", {32, 32, 1, 1})}, s), r}, s)}, s);
  b.output(b.node("Conv", {y, b.input("w3", {32, 32, 1, 1})}, s));   // y is no function output
  check_against_ref("onednn", b.g);
  const std::vector<std::string> impls = onednn::OnednnProgram(b.g, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations();
  INFO(listing(impls));
  CHECK(count_prefix(impls, "binary:") == 0);   // the Add is the third conv's sum post-op
  CHECK(count_prefix(impls, "reorder:") <= 1);
}
