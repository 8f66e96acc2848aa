// xnnpack compiled functions against ref, per op family, fused clamps and layouts included.
#include <sys/wait.h>
#include <unistd.h>

#include "backends/compilers/conv_cases.h"
#include "backends/compilers/function_builder.h"
#include "backends/xnnpack/xnnpack_compiler.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using I = std::vector<int64_t>;

namespace {

void check_unsupported(const Graph& fn, const std::string& fragment) {
  try {
    make_backend_compiler("xnnpack")->compile(fn);
    FAIL("compiled, expected KernelUnsupported mentioning " << fragment);
  } catch (const KernelUnsupported& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(fragment) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("xnnpack: Conv with groups, pads, strides, dilations, bias and a fused Relu") {
  check_against_ref("xnnpack", tessera::testing::grouped_conv_relu());
}

TEST_CASE("xnnpack: mobilenet block: pointwise, depthwise + Clip(0, 6), pointwise, residual Add") {
  FunctionBuilder b;
  const Shape xs{1, 16, 14, 14}, es{1, 32, 14, 14};
  const ValueId x = b.input("x", xs), we = b.input("we", {32, 16, 1, 1}), wd = b.input("wd", {32, 1, 3, 3});
  const ValueId bd = b.input("bd", {32}), wp = b.input("wp", {16, 32, 1, 1});
  const ValueId lo = b.scalar("lo", 0.0f), hi = b.scalar("hi", 6.0f);
  const ValueId e = b.node("Clip", {b.node("Conv", {x, we}, es), lo, hi}, es);
  const ValueId dw = b.node("Conv", {e, wd, bd}, es, {{"group", int64_t{32}}, {"pads", I{1, 1, 1, 1}}});
  const ValueId r6 = b.node("Clip", {dw, lo, hi}, es);
  const ValueId pw = b.node("Conv", {r6, wp}, xs);
  b.output(b.node("Add", {pw, x}, xs));
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: strided depthwise with a channel multiplier, SAME_UPPER padding") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 6, 9, 9}), w = b.input("w", {12, 1, 3, 3});
  b.output(b.node("Conv", {x, w}, {1, 12, 5, 5}, {{"group", int64_t{6}}, {"strides", I{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}));
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: Conv + constant [C,1,1] bias Add + unary ops (HardSwish, Sigmoid, LeakyRelu, Elu, PRelu)") {
  FunctionBuilder b;
  const Shape xs{1, 3, 8, 8}, ys{1, 8, 8, 8};
  const ValueId x = b.input("x", xs), w = b.input("w", {8, 3, 3, 3});
  std::vector<float> bias(8);
  for (int i = 0; i < 8; ++i) bias[static_cast<size_t>(i)] = 0.1f * static_cast<float>(i) - 0.3f;
  const ValueId bc = b.constant<float>("bias", DType::f32, {8, 1, 1}, bias);
  const ValueId c = b.node("Conv", {x, w}, ys, {{"pads", I{1, 1, 1, 1}}});
  const ValueId a = b.node("Add", {c, bc}, ys);
  b.output(b.node("HardSwish", {a}, ys));
  b.output(b.node("Sigmoid", {a}, ys));
  b.output(b.node("LeakyRelu", {a}, ys, {{"alpha", 0.2}}));
  b.output(b.node("Elu", {a}, ys, {{"alpha", 0.7}}));
  const ValueId slope = b.input("slope", {8, 1, 1});
  b.output(b.node("PRelu", {a, slope}, ys));
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: ConvTranspose with groups, stride, pads and output_padding") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 5, 5}), w = b.input("w", {4, 3, 3, 3}), bias = b.input("b", {6});
  // out = 2*(5-1) + 1 + 3 - 1 - 1 = 10
  b.output(b.node("ConvTranspose", {x, w, bias}, {1, 6, 10, 10},
                  {{"group", int64_t{2}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"output_padding", I{1, 1}}}));
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: Gemm (transB, alpha, beta) and MatMul with 2-D weights as fully connected") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {6, 10}), w = b.input("w", {5, 10}), c = b.input("c", {5});
  const ValueId g = b.node("Gemm", {a, w, c}, {6, 5}, {{"transB", int64_t{1}}});
  b.output(b.node("Relu", {g}, {6, 5}));
  const ValueId w2 = b.input("w2", {10, 7}), c2 = b.input("c2", {1, 7});
  b.output(b.node("Gemm", {a, w2, c2}, {6, 7}, {{"alpha", 0.5}, {"beta", 2.0}}));
  check_against_ref("xnnpack", b.g);

  FunctionBuilder m;
  const ValueId x = m.input("x", {2, 5, 7}), wm = m.input("w", {7, 4});
  m.output(m.node("MatMul", {x, wm}, {2, 5, 4}));
  check_against_ref("xnnpack", m.g);
}

TEST_CASE("xnnpack: pooling (max with pads and ceil_mode, avg without pads counted, global) and a classifier head") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 3, 9, 9});
  b.output(b.node("MaxPool", {x}, {2, 3, 5, 5}, {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}));
  b.output(b.node("AveragePool", {x}, {2, 3, 5, 5}, {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}));
  b.output(b.node("MaxPool", {x}, {2, 3, 4, 4}, {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"ceil_mode", int64_t{1}}}));
  b.output(b.node("AveragePool", {x}, {2, 3, 4, 4}, {{"kernel_shape", I{2, 2}}, {"strides", I{2, 2}}}));
  const ValueId gap = b.node("GlobalAveragePool", {x}, {2, 3, 1, 1});
  const ValueId flat = b.node("Flatten", {gap}, {2, 3});
  const ValueId w = b.input("w", {4, 3}), c = b.input("c", {4});
  b.output(b.node("Gemm", {flat, w, c}, {2, 4}, {{"transB", int64_t{1}}}));
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: binary ops with broadcasting, either side, on rank 3 and on NHWC rank 4") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 3, 4}), v = b.input("v", {4}), c = b.input("c", {3, 1});
  b.output(b.node("Sub", {x, v}, {2, 3, 4}));
  b.output(b.node("Mul", {c, x}, {2, 3, 4}));
  b.output(b.node("Max", {x, c}, {2, 3, 4}));
  b.output(b.node("Div", {v, b.node("Add", {x, b.scalar("two", 2.0f)}, {2, 3, 4})}, {2, 3, 4}));
  check_against_ref("xnnpack", b.g);

  FunctionBuilder n;   // NHWC inside: a [W] row and an [H,1] column must be permuted at the boundary
  const Shape xs{2, 3, 5, 6};
  const ValueId y = n.input("y", xs), row = n.input("row", {6}), col = n.input("col", {5, 1}), ch = n.input("ch", {3, 1, 1});
  const ValueId s = n.node("Add", {y, row}, xs);
  const ValueId m = n.node("Mul", {col, s}, xs);
  n.output(n.node("Min", {m, ch}, xs));
  n.output(n.node("Sub", {ch, y}, xs));
  check_against_ref("xnnpack", n.g);
}

TEST_CASE("xnnpack: BatchNormalization (folded multiply + add) with a fused Relu, on NCHW and on [N, C, L]") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 4, 5, 6}), y = b.input("y", {2, 4, 7});
  std::vector<ValueId> p;
  for (const char* n : {"gamma", "beta", "mean"}) p.push_back(b.input(n, {4}));
  p.push_back(b.constant<float>("var", DType::f32, {4}, {0.5f, 1.0f, 1.5f, 2.0f}));
  const ValueId bn = b.node("BatchNormalization", {x, p[0], p[1], p[2], p[3]}, {2, 4, 5, 6}, {{"epsilon", 1e-3}});
  b.output(b.node("Relu", {bn}, {2, 4, 5, 6}));
  b.output(b.node("BatchNormalization", {y, p[0], p[1], p[2], p[3]}, {2, 4, 7}));
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: Softmax on the last axis and on the channels of NCHW") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 5, 16});
  b.output(b.node("Softmax", {x}, {2, 5, 16}));
  const ValueId y = b.input("y", {1, 6, 3, 4});
  b.output(b.node("Softmax", {y}, {1, 6, 3, 4}, {{"axis", int64_t{1}}}));
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: bilinear Resize, constant Pad, DepthToSpace") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 5, 6});
  const ValueId roi = b.constant<float>("roi", DType::f32, {0}, {});
  const ValueId scales = b.constant<float>("scales", DType::f32, {4}, {1.0f, 1.0f, 2.0f, 2.0f});
  b.output(b.node("Resize", {x, roi, scales}, {1, 4, 10, 12}, {{"mode", std::string("linear")}}));
  const ValueId sizes = b.constant<int64_t>("sizes", DType::i64, {4}, {1, 4, 9, 7});
  b.output(b.node("Resize", {x, roi, b.constant<float>("none", DType::f32, {0}, {}), sizes}, {1, 4, 9, 7},
                  {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}}));
  const ValueId pads = b.constant<int64_t>("pads", DType::i64, {8}, {0, 1, 2, 0, 0, 0, 1, 3});
  b.output(b.node("Pad", {x, pads, b.scalar("v", 0.5f)}, {1, 5, 8, 9}));
  b.output(b.node("DepthToSpace", {x}, {1, 1, 10, 12}, {{"blocksize", int64_t{2}}}));
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: Reshape-like ops across rank 4: NHWC where the orders agree, NCHW as stored at the boundary") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 3, 4, 5});
  b.output(b.node("Flatten", {x}, {2, 60}));   // a function input: copied as stored, no permutation
  const ValueId v = b.input("v", {3, 4, 5});
  const ValueId u = b.node("Unsqueeze", {b.node("Relu", {v}, {3, 4, 5}), b.constant<int64_t>("axes", DType::i64, {1}, {0})},
                           {1, 3, 4, 5});
  b.output(u);                                 // a function output only: written NCHW
  const ValueId g = b.node("GlobalAveragePool", {x}, {2, 3, 1, 1});
  const ValueId shp = b.constant<int64_t>("shape", DType::i64, {2}, {2, 3});
  b.output(b.node("Relu", {b.node("Reshape", {g, shp}, {2, 3})}, {2, 3}));   // [N,C,1,1]: same order
  check_against_ref("xnnpack", b.g);
}

TEST_CASE("xnnpack: weights that are constants with data, and new weight pointers on a later run") {
  FunctionBuilder b;
  std::vector<float> wv(4 * 3 * 3 * 3);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
  const ValueId x = b.input("x", {1, 3, 6, 6});
  const ValueId w = b.constant<float>("w", DType::f32, {4, 3, 3, 3}, wv);
  b.output(b.node("Conv", {x, w}, {1, 4, 4, 4}));
  check_against_ref("xnnpack", b.g);

  FunctionBuilder f;   // the runtime is keyed by the weights' pointer: a new buffer is repacked
  const ValueId a = f.input("a", {3, 8}), fw = f.input("w", {8, 2});
  f.output(f.node("MatMul", {a, fw}, {3, 2}));
  auto compiled = make_backend_compiler("xnnpack")->compile(f.g);
  HostTensor in(TensorType{DType::f32, {3, 8}}), w1(TensorType{DType::f32, {8, 2}}), w2(TensorType{DType::f32, {8, 2}});
  HostTensor out(TensorType{DType::f32, {3, 2}});
  for (float& v : in.as<float>()) v = 1.0f;
  for (float& v : w1.as<float>()) v = 1.0f;
  for (float& v : w2.as<float>()) v = 2.0f;
  std::vector<ConstTensorView> ins{in.view(), w1.view()};
  std::vector<TensorView> outs{out.view()};
  compiled->run(ins, outs);
  CHECK(out.as<float>()[0] == 8.0f);
  ins[1] = w2.view();
  compiled->run(ins, outs);
  CHECK(out.as<float>()[5] == 16.0f);
}

TEST_CASE("xnnpack: a new thread count recreates the runtime on XNNPACK's pthreadpool, same results") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 8, 16, 16}), w = b.input("w", {8, 8, 3, 3});
  b.output(b.node("Relu", {b.node("Conv", {x, w}, {1, 8, 16, 16}, {{"pads", I{1, 1, 1, 1}}})}, {1, 8, 16, 16}));
  set_compute_threads(2);
  check_against_ref("xnnpack", b.g);
  set_compute_threads(1);
  check_against_ref("xnnpack", b.g);
}

// tune measures in forked children: a child must not wait on the parent's pool workers, which it
// does not have (it would hang until the measurement's timeout).
TEST_CASE("xnnpack: a forked child runs with a pool of its own") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 8, 16, 16}), w = b.input("w", {8, 8, 3, 3});
  b.output(b.node("Conv", {x, w}, {1, 8, 16, 16}, {{"pads", I{1, 1, 1, 1}}}));
  set_compute_threads(2);
  tessera::testing::run_compiled(*make_backend_compiler("xnnpack"), b.g);   // the parent's pool exists now
  const pid_t child = fork();
  if (child == 0) {
    alarm(20);   // a hang becomes SIGALRM
    tessera::testing::run_compiled(*make_backend_compiler("xnnpack"), b.g);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  set_compute_threads(1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("xnnpack: what XNNPACK cannot do is KernelUnsupported, naming the node and the reason") {
  FunctionBuilder t;
  const ValueId x = t.input("x", {2, 6});
  t.output(t.node("Tanh", {x}, {2, 6}));
  check_unsupported(t.g, "'Tanh_0' (Tanh): not in xnnpack's op table");

  FunctionBuilder s;
  const ValueId y = s.input("y", {2, 5, 16});
  s.output(s.node("Softmax", {y}, {2, 5, 16}, {{"axis", int64_t{1}}}));
  check_unsupported(s.g, "not the innermost axis");

  FunctionBuilder r;   // an NCHW Reshape that would need a transpose of the NHWC data
  const ValueId z = r.input("z", {1, 4, 2, 2});
  const ValueId shp = r.constant<int64_t>("shape", DType::i64, {2}, {1, 16});
  r.output(r.node("Reshape", {r.node("Relu", {z}, {1, 4, 2, 2}), shp}, {1, 16}));
  check_unsupported(r.g, "would need a transpose");

  FunctionBuilder m;   // weights computed inside the function
  const ValueId a = m.input("a", {3, 4}), bw = m.input("b", {4, 5});
  m.output(m.node("MatMul", {a, m.node("Relu", {bw}, {4, 5})}, {3, 5}));
  check_unsupported(m.g, "must be a weight");

  FunctionBuilder n;
  const ValueId v = n.input("v", {1, 2, 3, 3});
  const ValueId sc = n.constant<float>("scales", DType::f32, {4}, {1.0f, 1.0f, 2.0f, 2.0f});
  n.output(n.node("Resize", {v, n.constant<float>("roi", DType::f32, {0}, {}), sc}, {1, 2, 6, 6}));
  check_unsupported(n.g, "mode 'nearest'");
}
