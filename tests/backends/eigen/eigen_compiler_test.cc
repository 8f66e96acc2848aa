// eigen compiled functions against ref: GEMMs, fused elementwise programs, reductions.
#include "backends/compilers/function_builder.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using I = std::vector<int64_t>;

TEST_CASE("eigen: batched MatMul with broadcast, 1-D operands, Gemm with transposes and C") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {3, 1, 5, 7}), w = b.input("w", {2, 7, 4});
  b.output(b.node("MatMul", {a, w}, {3, 2, 5, 4}));
  const ValueId v = b.input("v", {7});
  b.output(b.node("MatMul", {v, w}, {2, 4}));
  check_against_ref("eigen", b.g);
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1}) {
      FunctionBuilder g;
      const ValueId A = g.input("A", ta ? Shape{9, 6} : Shape{6, 9}), B = g.input("B", tb ? Shape{5, 9} : Shape{9, 5});
      const ValueId C = g.input("C", {1, 5});
      g.output(g.node("Gemm", {A, B, C}, {6, 5}, {{"transA", ta}, {"transB", tb}, {"alpha", 0.5}, {"beta", 2.0}}));
      check_against_ref("eigen", g.g);
    }
}

TEST_CASE("eigen: a fused chain with broadcasts, a tapped value and a GELU built from Erf") {
  FunctionBuilder b;
  const Shape s{2, 4, 3, 5};
  const ValueId x = b.input("x", s), bias = b.input("bias", {4, 1, 1}), y = b.input("y", {5});
  const ValueId a = b.node("Add", {x, bias}, s);
  const ValueId r = b.node("Relu", {a}, s);
  const ValueId m = b.node("Mul", {r, y}, s);
  const ValueId lo = b.scalar("lo", -0.5f), hi = b.scalar("hi", 0.5f);
  const ValueId c = b.node("Clip", {m, lo, hi}, s);
  b.output(b.node("Sigmoid", {c}, s));
  b.output(a);   // stored from the middle of the program
  // gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2)))
  const ValueId d = b.node("Div", {x, b.scalar("sqrt2", 1.4142135f)}, s);
  const ValueId e = b.node("Erf", {d}, s);
  const ValueId one = b.node("Add", {e, b.scalar("one", 1.0f)}, s);
  const ValueId hx = b.node("Mul", {x, b.scalar("half", 0.5f)}, s);
  b.output(b.node("Mul", {hx, one}, s));
  check_against_ref("eigen", b.g);
}

TEST_CASE("eigen: MatMul + bias + Relu, reductions and softmax") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {8, 16}), w = b.input("w", {16, 12}), bias = b.input("bias", {12});
  const ValueId m = b.node("MatMul", {a, w}, {8, 12});
  const ValueId r = b.node("Relu", {b.node("Add", {m, bias}, {8, 12})}, {8, 12});
  b.output(b.node("Softmax", {r}, {8, 12}));
  b.output(b.node("ReduceMean", {r}, {8, 1}, {{"axes", I{-1}}}));
  const ValueId x = b.input("x", {2, 3, 4, 5});
  b.output(b.node("ReduceMax", {x}, {2, 1, 1, 5}, {{"axes", I{1, 2}}}));
  const ValueId axes = b.constant<int64_t>("axes", DType::i64, {1}, {0});
  b.output(b.node("ReduceSum", {x, axes}, {3, 4, 5}, {{"keepdims", int64_t{0}}}));
  b.output(b.node("Softmax", {x}, {2, 3, 4, 5}, {{"axis", int64_t{1}}}));
  check_against_ref("eigen", b.g);
}

TEST_CASE("eigen: ops without an eigen kernel are KernelUnsupported") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 2, 4, 4});
  b.output(b.node("MaxPool", {x}, {1, 2, 2, 2}, {{"kernel_shape", I{2, 2}}, {"strides", I{2, 2}}}));
  CHECK_THROWS_AS(make_backend_compiler("eigen")->compile(b.g), KernelUnsupported);
}
