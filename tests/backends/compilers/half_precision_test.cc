// f16/bf16 functions: ref runs them node by node in f32 (half_kernels.h), the f32 backends compile
// them as f32 with conversions at the boundary (half_widening.h). Both are compared with the same
// function computed in f32 on the same (rounded) inputs: relative L2 error <= 1e-2.
#include <map>

#include "backends/compilers/function_builder.h"
#include "backends/compilers/half_widening.h"
#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "backends/ref/half_convert.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using I = std::vector<int64_t>;

namespace {

// `fn` with every f32 value (and constant) stored as `dtype` instead.
Graph narrowed(const Graph& fn, DType dtype) {
  Graph out = fn;
  for (Value& v : out.values) {
    if (v.type.dtype != DType::f32) continue;
    v.type.dtype = dtype;
    if (!v.data) continue;
    const auto n = static_cast<size_t>(v.type.numel());
    auto bytes = std::make_shared<TensorBytes>(n * 2);
    narrow_from_f32(dtype, reinterpret_cast<const float*>(v.data->data()), bytes->data(), n);
    v.data = std::move(bytes);
  }
  return out;
}

HostTensor converted(const HostTensor& t, DType to) {
  HostTensor out(TensorType{to, t.type.shape});
  if (to == DType::f32) widen_to_f32(t.type.dtype, t.bytes.data(), out.as<float>().data(), t.count());
  else narrow_from_f32(to, t.as<float>().data(), out.bytes.data(), t.count());
  return out;
}

// Runs fn on `backend` with seeded inputs; inputs of a half function are the f32 ones rounded.
std::vector<HostTensor> run(const std::string& backend, const Graph& fn) {
  std::vector<HostTensor> ins, outs;
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const TensorType& t = fn.value(fn.inputs[i]).type;
    HostTensor x = HostTensor::random(TensorType{DType::f32, t.shape}, 7 + i);
    ins.push_back(t.dtype == DType::f32 ? x : converted(x, t.dtype));
  }
  for (ValueId v : fn.outputs) outs.emplace_back(fn.value(v).type);
  std::vector<ConstTensorView> in_views;
  for (const HostTensor& t : ins) in_views.push_back(t.view());
  std::vector<TensorView> out_views;
  for (HostTensor& t : outs) out_views.push_back(t.view());
  make_backend_compiler(backend)->compile(fn)->run(in_views, out_views);
  return outs;
}

// The f32 function's outputs computed by ref from the same rounded inputs.
std::vector<HostTensor> f32_reference(const Graph& fn32, DType half) {
  std::vector<HostTensor> ins;
  std::vector<HostTensor> outs;
  for (size_t i = 0; i < fn32.inputs.size(); ++i) {
    HostTensor x = HostTensor::random(fn32.value(fn32.inputs[i]).type, 7 + i);
    ins.push_back(converted(converted(x, half), DType::f32));
  }
  for (ValueId v : fn32.outputs) outs.emplace_back(fn32.value(v).type);
  std::vector<ConstTensorView> in_views;
  for (const HostTensor& t : ins) in_views.push_back(t.view());
  std::vector<TensorView> out_views;
  for (HostTensor& t : outs) out_views.push_back(t.view());
  make_backend_compiler("ref")->compile(fn32)->run(in_views, out_views);
  return outs;
}

void check_close(const std::string& backend, const Graph& fn32, DType half) {
  const Graph fn = narrowed(fn32, half);
  const std::vector<HostTensor> got = run(backend, fn), want = f32_reference(fn32, half);
  REQUIRE(got.size() == want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    CHECK(got[o].type.dtype == half);
    const double err = relative_l2_error(converted(got[o], DType::f32), want[o]);
    INFO(backend << " " << dtype_name(half) << " output " << o << ": relative L2 error " << err);
    CHECK(err <= (half == DType::f16 ? 1e-2 : 3e-2));
    CHECK(err > 0.0);   // it did round: the comparison can fail
  }
}

// x -> Conv(3x3, bias) -> Relu -> MaxPool -> Sigmoid, plus a residual Add: the ops of ISNet.
Graph conv_function() {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 8, 8}), w = b.input("w", {4, 4, 3, 3}), bias = b.input("b", {4});
  const ValueId c = b.node("Conv", {x, w, bias}, {1, 4, 8, 8}, {{"pads", I{1, 1, 1, 1}}});
  const ValueId r = b.node("Relu", {c}, {1, 4, 8, 8});
  const ValueId a = b.node("Add", {r, x}, {1, 4, 8, 8});
  const ValueId p = b.node("MaxPool", {a}, {1, 4, 4, 4}, {{"kernel_shape", I{2, 2}}, {"strides", I{2, 2}}});
  b.output(b.node("Sigmoid", {p}, {1, 4, 4, 4}));
  return b.g;
}

Graph matmul_function() {
  FunctionBuilder b;
  const ValueId x = b.input("x", {8, 16}), w = b.input("w", {16, 12}), bias = b.input("b", {12});
  const ValueId m = b.node("MatMul", {x, w}, {8, 12});
  const ValueId a = b.node("Add", {m, bias}, {8, 12});
  b.output(b.node("Relu", {a}, {8, 12}));
  return b.g;
}

Graph gemm_function() {
  FunctionBuilder b;
  b.output(b.node("MatMul", {b.input("x", {8, 16}), b.input("w", {16, 12})}, {8, 12}));
  return b.g;
}

Graph elementwise_function() {
  FunctionBuilder b;
  const ValueId s = b.node("Add", {b.input("x", {4, 32}), b.input("y", {4, 32})}, {4, 32});
  b.output(b.node("Sigmoid", {b.node("Mul", {s, s}, {4, 32})}, {4, 32}));
  return b.g;
}

}  // namespace

TEST_CASE("ref runs f16 and bf16 nodes in f32, rounding each node's outputs", "[half]") {
  for (DType half : {DType::f16, DType::bf16}) {
    check_close("ref", conv_function(), half);
    check_close("ref", matmul_function(), half);
  }
}

TEST_CASE("ref's half wrapper: f16 Cast, Resize and Concat run, and f32 nodes are untouched", "[half]") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 2, 2, 2});
  const ValueId h = b.node("Cast", {x}, {1, 2, 2, 2}, {{"to", int64_t{10}}});
  b.g.value(h).type.dtype = DType::f16;
  const ValueId scales = b.constant<float>("scales", DType::f32, {4}, {1, 1, 2, 2});
  const ValueId up = b.node("Resize", {h, kNoValue, scales}, {1, 2, 4, 4}, {{"mode", std::string("nearest")}});
  b.g.value(up).type.dtype = DType::f16;
  const ValueId cat = b.node("Concat", {up, up}, {1, 4, 4, 4}, {{"axis", int64_t{1}}});
  b.g.value(cat).type.dtype = DType::f16;
  const ValueId back = b.node("Cast", {cat}, {1, 4, 4, 4}, {{"to", int64_t{1}}});
  b.output(back);
  HostTensor in = HostTensor::of<float>(DType::f32, {1, 2, 2, 2}, {0.1f, 1.0f, 2.5f, -3.0f, 65504.0f, 1e-3f, 7.0f, 0.5f});
  auto values = interpret(b.g, make_ref_kernels(), {{x, in}});
  const auto out = values[static_cast<size_t>(back)].as<float>();
  CHECK(out[0] == half_to_float(float_to_half(0.1f)));   // rounded to f16 once, by the Cast
  CHECK(out[3] == 1.0f);                                  // Resize, nearest: (0, 3) reads (0, 1)
  CHECK(out[4 * 4] == 65504.0f);                          // f16's largest finite value, kept
  CHECK(out[2 * 16] == half_to_float(float_to_half(0.1f)));   // Concat's second copy
}

TEST_CASE("f32 backends compile f16 and bf16 functions as f32 with conversions", "[half]") {
  for (DType half : {DType::f16, DType::bf16}) {
    check_close("onednn", conv_function(), half);
    check_close("xnnpack", conv_function(), half);
    check_close("eigen", matmul_function(), half);
    check_close("blas", gemm_function(), half);
    check_close("halide", elementwise_function(), half);
  }
}

TEST_CASE("widening turns every half value, constant and Cast target into f32", "[half]") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {4}, DType::f16);
  const ValueId k = b.constant<uint16_t>("k", DType::f16, {}, {float_to_half(2.0f)});
  const ValueId m = b.node("Mul", {x, k}, {4});
  b.g.value(m).type.dtype = DType::f16;
  const ValueId c = b.node("Cast", {m}, {4}, {{"to", int64_t{1}}});
  const ValueId h = b.node("Cast", {c}, {4}, {{"to", int64_t{10}}});
  b.g.value(h).type.dtype = DType::f16;
  b.output(h);
  REQUIRE(has_half_values(b.g));
  const Graph wide = widen_function(b.g);
  CHECK_FALSE(has_half_values(wide));
  for (const Value& v : wide.values) CHECK(v.type.dtype == DType::f32);
  CHECK(reinterpret_cast<const float*>(wide.value(k).data->data())[0] == 2.0f);
  CHECK(std::get<int64_t>(wide.nodes[2].attrs.at("to")) == 1);
  // A function without half values is compiled as it is.
  FunctionBuilder f;
  f.output(f.node("Relu", {f.input("x", {4})}, {4}));
  CHECK_FALSE(has_half_values(f.g));
}
