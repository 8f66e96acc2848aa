// Boundary layouts (boundary_layout.h): a function compiled with NHWC activations at its boundary
// computes what the plain one computes, on onednn and xnnpack, through every path that touches a
// boundary value (a conv that reads and writes it as is, a view of it, a MatMul that wants it
// plain, an output written through a Reshape); conversions round-trip; backends that only take
// plain boundaries refuse, and so does a layout on a value with one memory order.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>

#include "backends/compilers/function_builder.h"
#include "ir/boundary_layout.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using I = std::vector<int64_t>;

namespace {

// Plain [N,C,H,W] data -> the bytes of `layout` (to = true), or back (to = false).
HostTensor permuted(const HostTensor& t, Layout layout, bool to) {
  if (layout == Layout::plain) return t;
  const Shape& s = t.type.shape;
  HostTensor out(t.type);
  auto src = t.as<float>();
  auto dst = out.as<float>();
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t hw = 0; hw < s[2] * s[3]; ++hw) {
        const size_t plain = size_t((n * s[1] + c) * s[2] * s[3] + hw), nhwc = size_t((n * s[2] * s[3] + hw) * s[1] + c);
        dst[to ? nhwc : plain] = src[to ? plain : nhwc];
      }
  return out;
}
HostTensor to_layout(const HostTensor& plain, Layout layout) { return permuted(plain, layout, true); }
HostTensor from_layout(const HostTensor& stored, Layout layout) { return permuted(stored, layout, false); }

// Runs fn on `backend` with plain boundaries and with its native ones (`activation` as codegen
// would pass it) on the same logical inputs; the outputs must agree. Returns the layouts used.
BoundaryLayouts check_native_equals_plain(const std::string& backend, const Graph& fn, const std::vector<bool>& activation = {}) {
  auto compiler = make_backend_compiler(backend);
  const BoundaryLayouts layouts = native_boundary_layouts(fn, compiler->native_layout(), activation);
  auto plain = compiler->compile(fn);
  auto native = compiler->compile(fn, layouts);
  CHECK(native->layouts() == layouts);
  std::vector<HostTensor> ins, stored_ins, want, got;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    ins.push_back(HostTensor::random(fn.value(fn.inputs[i]).type, 7 + i));
    stored_ins.push_back(to_layout(ins.back(), layouts.inputs[i]));
  }
  for (ValueId v : fn.outputs) {
    want.emplace_back(fn.value(v).type);
    got.emplace_back(fn.value(v).type);
  }
  auto run = [](CompiledFunction& f, std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    std::vector<ConstTensorView> iv;
    std::vector<TensorView> ov;
    for (const HostTensor& t : in) iv.push_back(t.view());
    for (HostTensor& t : out) ov.push_back(t.view());
    f.run(iv, ov);
  };
  run(*plain, ins, want);
  run(*native, stored_ins, got);
  run(*native, stored_ins, got);   // twice: nothing stale
  for (size_t o = 0; o < want.size(); ++o) {
    HostTensor g = from_layout(got[o], layouts.outputs[o]);
    auto w = want[o].as<float>();
    auto x = g.as<float>();
    double worst = 0;
    for (size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::fabs(double(x[i]) - double(w[i])) / (1.0 + std::fabs(double(w[i]))));
    INFO(backend << " output " << o << " (" << to_string(layouts.outputs[o]) << ")");
    CHECK(worst <= 1e-5);
  }
  return layouts;
}

// x -> Conv(W) -> Relu -> y, with W an input as in a module's function (a weight: plain).
Graph conv_relu() {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 8, 10, 10}), w = b.input("w", {16, 8, 3, 3});
  b.output(b.node("Relu", {b.node("Conv", {x, w}, {1, 16, 10, 10}, {{"pads", I{1, 1, 1, 1}}})}, {1, 16, 10, 10}));
  return b.g;
}

// Two activations added, one of them also viewed as a matrix and multiplied: a view of an nhwc
// input (plain first), a binary op in whatever layout it arrives, a rank-3 output (plain).
Graph add_and_matmul() {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 8, 4, 4}), y = b.input("y", {1, 8, 4, 4});
  const ValueId w = b.weight("w", {16, 5});
  b.output(b.node("Add", {x, y}, {1, 8, 4, 4}));
  const ValueId shape = b.constant<int64_t>("shape", DType::i64, {3}, {1, 8, 16});
  b.output(b.node("MatMul", {b.node("Reshape", {x, shape}, {1, 8, 16}), w}, {1, 8, 5}));
  return b.g;
}

// A conv whose result leaves through a Reshape to another 4-D shape: the output is written
// through other dims.
Graph conv_then_reshape() {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 6, 6});
  const ValueId w = b.weight("w", {8, 4, 1, 1});
  const ValueId c = b.node("Conv", {x, w}, {1, 8, 6, 6});
  const ValueId shape = b.constant<int64_t>("shape", DType::i64, {4}, {1, 4, 12, 6});
  b.output(b.node("Reshape", {c, shape}, {1, 4, 12, 6}));
  return b.g;
}

// A conv whose nhwc result y feeds a decomposed HardSwish, y * Clip(y + 3, 0, 6) / 6 (as
// PaddleOCR exports it): y is read twice, once as a post-op operand. Everything can stay nhwc.
Graph conv_hardswish() {
  FunctionBuilder b;
  const Shape s{1, 16, 12, 12};
  const ValueId x = b.input("x", {1, 8, 12, 12});
  const ValueId y = b.node("Conv", {x, b.weight("w", {16, 8, 1, 1})}, s);
  const ValueId three = b.constant<float>("three", DType::f32, {}, {3.0f});
  const ValueId lo = b.constant<float>("lo", DType::f32, {}, {0.0f}), hi = b.constant<float>("hi", DType::f32, {}, {6.0f});
  const ValueId clip = b.node("Clip", {b.node("Add", {y, three}, s), lo, hi}, s);
  b.output(b.node("Div", {b.node("Mul", {y, clip}, s), hi}, s));
  return b.g;
}

// ShuffleNet's channel shuffle (Concat, Reshape, Transpose, Reshape) and the next unit's channel
// split, in one function: the shuffled value is an output and is read again by the Slice.
Graph shuffle_then_split() {
  FunctionBuilder b;
  const Shape half{1, 12, 5, 5}, whole{1, 24, 5, 5};
  const ValueId x1 = b.input("x1", half), x2 = b.input("x2", half);
  auto ints = [&](const std::string& name, I v) { return b.constant<int64_t>(name, DType::i64, {int64_t(v.size())}, v); };
  const ValueId cat = b.node("Concat", {x1, x2}, whole, {{"axis", int64_t(1)}});
  const ValueId r = b.node("Reshape", {cat, ints("groups", {1, 2, 12, 5, 5})}, {1, 2, 12, 5, 5});
  const ValueId t = b.node("Transpose", {r}, {1, 12, 2, 5, 5}, {{"perm", I{0, 2, 1, 3, 4}}});
  const ValueId s = b.node("Reshape", {t, ints("back", {1, 24, 5, 5})}, whole);
  b.output(s);
  b.output(b.node("Slice", {s, ints("starts", {12}), ints("ends", {24}), ints("axes", {1})}, half));
  return b.g;
}

}  // namespace

TEST_CASE("boundary layouts: which values have two memory orders", "[layout]") {
  CHECK(layout_sensitive({DType::f32, {1, 8, 4, 4}}));
  CHECK_FALSE(layout_sensitive({DType::f32, {1, 8, 1, 1}}));   // after global pooling: same bytes
  CHECK_FALSE(layout_sensitive({DType::f32, {1, 1, 4, 4}}));
  CHECK_FALSE(layout_sensitive({DType::f32, {8, 16}}));
  CHECK_FALSE(layout_sensitive({DType::i64, {1, 8, 4, 4}}));
  CHECK(physical_shape({DType::f32, {1, 8, 4, 5}}, Layout::nhwc) == Shape{1, 4, 5, 8});
  const Graph fn = conv_relu();
  BoundaryLayouts l = native_boundary_layouts(fn, Layout::nhwc, {true, false});
  CHECK(l.inputs == std::vector<Layout>{Layout::nhwc, Layout::plain});
  CHECK(l.outputs == std::vector<Layout>{Layout::nhwc});
  CHECK(native_boundary_layouts(fn, Layout::plain).all_plain());
  // Alone (a candidate being measured), a function's conv weights are told apart by use.
  CHECK(activation_inputs(fn) == std::vector<bool>{true, false});
  CHECK(activation_inputs(add_and_matmul()) == std::vector<bool>{true, true});   // both read as data
}

TEST_CASE("boundary layouts: onednn with NHWC activations computes what plain does", "[layout][onednn]") {
  CHECK(make_backend_compiler("onednn")->native_layout() == Layout::nhwc);
  CHECK(check_native_equals_plain("onednn", conv_relu(), {true, false}).inputs[0] == Layout::nhwc);
  BoundaryLayouts l = check_native_equals_plain("onednn", add_and_matmul());
  CHECK(l.inputs == std::vector<Layout>{Layout::nhwc, Layout::nhwc});
  CHECK(l.outputs == std::vector<Layout>{Layout::nhwc, Layout::plain});
  check_native_equals_plain("onednn", conv_then_reshape());
  // A value written through a Transpose's dims and read again as itself: it used to keep the
  // Transpose's 5-D descriptor, and the Slice's window failed ("dimensions are invalid").
  l = check_native_equals_plain("onednn", shuffle_then_split());
  CHECK(l.outputs == std::vector<Layout>{Layout::nhwc, Layout::nhwc});
}

TEST_CASE("boundary layouts: onednn keeps an nhwc value nhwc where a plain copy is not needed", "[layout][onednn]") {
  // Reading y plain once (to try it as a post-op operand) used to make every later reader take the
  // plain copy: two reorders per use and one plain buffer per value. Now the workspace holds one
  // buffer per value computed and no plain copy: with AVX-512 oneDNN picks nhwc and fuses the whole
  // chain into the convolution (one activation); with AVX2 it picks nChw8c and runs y + 3, the
  // clip and the product apart in that layout (four activations, plus the blocked input; with
  // plain copies it was 5.6).
  const Graph fn = conv_hardswish();
  const BoundaryLayouts l = check_native_equals_plain("onednn", fn, {true, false});
  CHECK(l.outputs == std::vector<Layout>{Layout::nhwc});
  auto f = make_backend_compiler("onednn")->compile(fn, l);
  const size_t activation = 16 * 12 * 12 * sizeof(float);
  INFO("workspace " << f->workspace_bytes() << " bytes, one activation " << activation);
  CHECK(f->workspace_bytes() < 5 * activation);
}

TEST_CASE("boundary layouts: xnnpack with NHWC activations computes what plain does", "[layout][xnnpack]") {
  CHECK(make_backend_compiler("xnnpack")->native_layout() == Layout::nhwc);
  check_native_equals_plain("xnnpack", conv_relu(), {true, false});
  // A Reshape of an nhwc input to a matrix (XNNPACK reads it as stored in NCHW: a permutation).
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 8, 3, 3});
  const ValueId shape = b.constant<int64_t>("shape", DType::i64, {2}, {1, 72});
  b.output(b.node("Gemm", {b.node("Reshape", {x, shape}, {1, 72}), b.weight("w", {72, 4})}, {1, 4}));
  CHECK(check_native_equals_plain("xnnpack", b.g).inputs[0] == Layout::nhwc);
}

TEST_CASE("boundary layouts: a conversion is a oneDNN reorder that round-trips", "[layout]") {
  const TensorType t{DType::f32, {2, 3, 4, 5}};
  // Conversions run on one OpenMP thread (onednn_program.cc, OneThreadIf) and leave the count
  // the rest of the process runs with as it was.
  set_compute_threads(2);
  auto compiler = make_backend_compiler(kConversionBackend);
  auto to_nhwc = compiler->compile(layout_conversion(t, Layout::plain, Layout::nhwc));
  auto back = compiler->compile(layout_conversion(t, Layout::nhwc, Layout::plain));
  HostTensor x = HostTensor::random(t, 3);
  HostTensor mid({t.dtype, physical_shape(t, Layout::nhwc)}), y(t);
  std::vector<ConstTensorView> in{x.view()};
  std::vector<TensorView> out{mid.view()};
  to_nhwc->run(in, out);
  CHECK(mid.bytes == to_layout(x, Layout::nhwc).bytes);   // same bytes as the test's own permutation
  std::vector<ConstTensorView> in2{mid.view()};
  std::vector<TensorView> out2{y.view()};
  back->run(in2, out2);
  CHECK(y.bytes == x.bytes);
  CHECK(omp_get_max_threads() == 2);
  set_compute_threads(1);
}

TEST_CASE("boundary layouts: refused where they cannot hold", "[layout]") {
  const Graph fn = conv_relu();
  BoundaryLayouts l = native_boundary_layouts(fn, Layout::nhwc, {true, false});
  for (const char* plain_only : {"ref", "eigen", "blas", "halide"})
    CHECK_THROWS_AS(make_backend_compiler(plain_only)->compile(fn, l), KernelUnsupported);
  l.inputs[1] = Layout::nhwc;   // the weight [16,8,3,3] is rank 4 and sensitive: allowed, but
  l.inputs.pop_back();          // a vector of the wrong size is not
  CHECK_THROWS_AS(make_backend_compiler("onednn")->compile(fn, l), KernelError);
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 8, 1, 1});
  b.output(b.node("Relu", {x}, {1, 8, 1, 1}));
  CHECK_THROWS_AS(make_backend_compiler("onednn")->compile(b.g, BoundaryLayouts{{Layout::nhwc}, {Layout::plain}}), KernelError);
}
