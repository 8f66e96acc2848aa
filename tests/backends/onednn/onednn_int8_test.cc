// onednn's int8 primitives (onednn_qdq.h, onednn_int8.cc, onednn_integer.cc) against ref: QDQ
// groups and QLinearConv / QLinearMatMul compile to one int8 convolution or matmul, ConvInteger /
// MatMulInteger to exact int32 ones, match ref within one quantization step
// (nearly all elements exactly), and what oneDNN 2.x cannot take is refused, never computed wrong.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>

#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_program.h"
#include "backends/onednn/onednn_implementations.h"
#include "backends/kernel.h"

using namespace tessera;
using tessera::testing::count_prefix;
using tessera::testing::FunctionBuilder;
using I = std::vector<int64_t>;

namespace {

// Random bytes / floats for the function's inputs, the same for both backends.
std::vector<HostTensor> inputs_for(const Graph& fn, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<HostTensor> ins;
  for (ValueId v : fn.inputs) {
    HostTensor t(fn.value(v).type);
    const int64_t n = t.type.numel();
    switch (t.type.dtype) {
      case DType::u8:
        for (int64_t i = 0; i < n; ++i) t.as<uint8_t>()[i] = static_cast<uint8_t>(rng() % 256);
        break;
      case DType::i8:
        for (int64_t i = 0; i < n; ++i) t.as<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
        break;
      default: {
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (int64_t i = 0; i < n; ++i) t.as<float>()[i] = u(rng);
      }
    }
    ins.push_back(std::move(t));
  }
  return ins;
}

std::vector<HostTensor> run(const std::string& backend, const Graph& fn, const std::vector<HostTensor>& ins) {
  auto compiled = make_backend_compiler(backend)->compile(fn);
  std::vector<HostTensor> outs;
  for (ValueId v : fn.outputs) outs.emplace_back(fn.value(v).type);
  std::vector<ConstTensorView> iv;
  std::vector<TensorView> ov;
  for (const HostTensor& t : ins) iv.push_back(t.view());
  for (HostTensor& t : outs) ov.push_back(t.view());
  compiled->run(iv, ov);
  return outs;
}

// Every output element within one quantization step of ref's (1 for integers, `step` for floats),
// and at least 99% of them equal.
void check_within_one_step(const Graph& fn, double step = 1.0) {
  const auto ins = inputs_for(fn, 7);
  const auto want = run("ref", fn, ins), got = run("onednn", fn, ins);
  for (size_t o = 0; o < want.size(); ++o) {
    const auto& w = want[o];
    const auto& g = got[o];
    REQUIRE(w.type == g.type);
    size_t equal = 0, far = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < w.type.numel(); ++i) {
      double a = 0, b = 0;
      switch (w.type.dtype) {
        case DType::u8: a = w.as<uint8_t>()[i], b = g.as<uint8_t>()[i]; break;
        case DType::i8: a = w.as<int8_t>()[i], b = g.as<int8_t>()[i]; break;
        case DType::i32: a = w.as<int32_t>()[i], b = g.as<int32_t>()[i]; break;
        default: a = w.as<float>()[i], b = g.as<float>()[i];
      }
      const double d = std::fabs(a - b);
      worst = std::max(worst, d);
      equal += d <= 1e-6 * (1 + std::fabs(a));
      far += d > step * (1 + 1e-6);
    }
    INFO("output " << o << ": worst difference " << worst << ", " << equal << " of " << w.type.numel() << " equal");
    CHECK(far == 0);
    CHECK(static_cast<double>(equal) >= 0.99 * static_cast<double>(w.type.numel()));
  }
}

template <typename T>
std::vector<T> random_ints(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)));
  return v;
}

std::vector<float> random_floats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

ValueId with_dtype(FunctionBuilder& b, ValueId v, DType t) {
  b.g.value(v).type.dtype = t;
  return v;
}

// The static QDQ group as ONNX Runtime's quantizer writes it: xq (u8, zero point 128) ->
// DequantizeLinear; s8 weights per output channel -> DequantizeLinear; a float bias (a function
// input) or an int32 one through DequantizeLinear; Conv (groups g) [-> Relu | Clip] -> QuantizeLinear.
Graph qdq_conv(int64_t c, int64_t o, int64_t g, const std::string& act, bool int_bias) {
  FunctionBuilder b;
  const Shape xs{1, c, 12, 12}, ys{1, o, 12, 12};
  const ValueId xq = b.input("xq", xs, DType::u8);
  const ValueId xs_ = b.scalar("x_scale", 0.02f), xz = b.constant<uint8_t>("x_zero", DType::u8, {}, {128});
  const ValueId x = b.node("DequantizeLinear", {xq, xs_, xz}, xs);
  const auto wq_data = random_ints<int8_t>(static_cast<size_t>(o * (c / g) * 9), -127, 127, 3);
  const ValueId wq = b.constant<int8_t>("wq", DType::i8, {o, c / g, 3, 3}, wq_data);
  const auto w_scales = random_floats(static_cast<size_t>(o), 0.002f, 0.01f, 4);
  const ValueId ws = b.constant<float>("w_scale", DType::f32, {o}, w_scales);
  const ValueId wz = b.constant<int8_t>("w_zero", DType::i8, {o}, std::vector<int8_t>(static_cast<size_t>(o), 0));
  const ValueId w = b.node("DequantizeLinear", {wq, ws, wz}, {o, c / g, 3, 3}, {{"axis", int64_t{0}}});
  ValueId bias;
  if (int_bias) {
    std::vector<float> bs(static_cast<size_t>(o));
    for (size_t k = 0; k < bs.size(); ++k) bs[k] = 0.02f * w_scales[k];
    const ValueId bq = b.constant<int32_t>("bq", DType::i32, {o}, random_ints<int32_t>(static_cast<size_t>(o), -3000, 3000, 5));
    const ValueId bsv = b.constant<float>("b_scale", DType::f32, {o}, bs);
    const ValueId bz = b.constant<int32_t>("b_zero", DType::i32, {o}, std::vector<int32_t>(static_cast<size_t>(o), 0));
    bias = b.node("DequantizeLinear", {bq, bsv, bz}, {o}, {{"axis", int64_t{0}}});
  } else {
    bias = b.input("bias", {o});
  }
  ValueId y = b.node("Conv", {x, w, bias}, ys, {{"pads", I{1, 1, 1, 1}}, {"group", g}});
  if (act == "Relu") y = b.node("Relu", {y}, ys);
  if (act == "Clip") y = b.node("Clip", {y, b.scalar("lo", 0.0f), b.scalar("hi", 0.5f)}, ys);
  const ValueId yz = b.constant<uint8_t>("y_zero", DType::u8, {}, {act.empty() ? uint8_t{120} : uint8_t{3}});
  b.output(with_dtype(b, b.node("QuantizeLinear", {y, b.scalar("y_scale", 0.01f), yz}, ys), DType::u8));
  return b.g;
}

}  // namespace

TEST_CASE("onednn int8: a QDQ Conv group is one int8 convolution, within one step of ref") {
  for (const std::string act : {"", "Relu", "Clip"})
    for (const bool int_bias : {false, true}) {
      INFO("activation '" << act << "', int32 bias " << int_bias);
      const Graph fn = qdq_conv(16, 32, 1, act, int_bias);
      check_within_one_step(fn);
      // One convolution, no f32 work: the DequantizeLinear/QuantizeLinear nodes are inside it.
      CHECK(count_prefix(fn, "convolution:") == 1);
      CHECK(count_prefix(fn, "eltwise:") == 0);
    }
}

TEST_CASE("onednn int8: depthwise and grouped QDQ convolutions") {
  check_within_one_step(qdq_conv(16, 16, 16, "Clip", true));
  check_within_one_step(qdq_conv(16, 32, 4, "Relu", false));
}

TEST_CASE("onednn int8: QDQ Gemm (transB, per-channel) and MatMul, then DequantizeLinear") {
  for (const bool gemm : {true, false}) {
    FunctionBuilder b;
    const int64_t M = 4, K = 64, N = 24;
    const ValueId aq = b.input("aq", {M, K}, DType::u8);
    const ValueId a = b.node("DequantizeLinear", {aq, b.scalar("a_scale", 0.05f), b.constant<uint8_t>("a_zero", DType::u8, {}, {100})}, {M, K});
    const Shape wshape = gemm ? Shape{N, K} : Shape{K, N};
    const ValueId wq = b.constant<int8_t>("wq", DType::i8, wshape, random_ints<int8_t>(static_cast<size_t>(N * K), -127, 127, 9));
    const ValueId ws = b.constant<float>("w_scale", DType::f32, {N}, random_floats(static_cast<size_t>(N), 0.001f, 0.004f, 10));
    const ValueId wz = b.constant<int8_t>("w_zero", DType::i8, {N}, std::vector<int8_t>(static_cast<size_t>(N), 0));
    const ValueId w = b.node("DequantizeLinear", {wq, ws, wz}, wshape, {{"axis", int64_t{gemm ? 0 : 1}}});
    const ValueId y = gemm ? b.node("Gemm", {a, w, b.input("bias", {N})}, {M, N}, {{"transB", int64_t{1}}}) : b.node("MatMul", {a, w}, {M, N});
    const ValueId ys = b.scalar("y_scale", 0.03f), yz = b.constant<uint8_t>("y_zero", DType::u8, {}, {128});
    const ValueId yq = with_dtype(b, b.node("QuantizeLinear", {y, ys, yz}, {M, N}), DType::u8);
    b.output(b.node("DequantizeLinear", {yq, ys, yz}, {M, N}));
    INFO((gemm ? "Gemm" : "MatMul"));
    check_within_one_step(b.g, 0.03);
    CHECK(count_prefix(b.g, "matmul:") == 1);
  }
}

TEST_CASE("onednn int8: QLinearConv with an s8 source and an int32 bias, then QLinearMatMul") {
  FunctionBuilder b;
  const ValueId xq = b.input("xq", {1, 8, 6, 6}, DType::i8);
  const ValueId xs = b.scalar("x_scale", 0.03f), xz = b.constant<int8_t>("x_zero", DType::i8, {}, {-5});
  const ValueId w = b.constant<int8_t>("w", DType::i8, {4, 8, 3, 3}, random_ints<int8_t>(4 * 8 * 9, -127, 127, 11));
  const ValueId ws = b.constant<float>("w_scale", DType::f32, {4}, random_floats(4, 0.002f, 0.01f, 12));
  const ValueId wz = b.constant<int8_t>("w_zero", DType::i8, {4}, {0, 0, 0, 0});
  const ValueId cs = b.scalar("c_scale", 0.05f), cz = b.constant<uint8_t>("c_zero", DType::u8, {}, {90});
  const ValueId bias = b.constant<int32_t>("bias", DType::i32, {4}, {100, -2000, 0, 1500});
  const ValueId c = with_dtype(b, b.node("QLinearConv", {xq, xs, xz, w, ws, wz, cs, cz, bias}, {1, 4, 4, 4}), DType::u8);
  b.output(c);
  check_within_one_step(b.g);
  CHECK(count_prefix(b.g, "convolution:") == 1);

  FunctionBuilder m;
  const ValueId aq = m.input("aq", {4, 16}, DType::u8);
  const ValueId bq = m.constant<int8_t>("b", DType::i8, {16, 6}, random_ints<int8_t>(96, -127, 127, 13));
  const ValueId y = m.node("QLinearMatMul", {aq, m.scalar("a_scale", 0.05f), m.constant<uint8_t>("a_zero", DType::u8, {}, {90}), bq,
                                            m.scalar("b_scale", 0.004f), m.constant<int8_t>("b_zero", DType::i8, {}, {0}),
                                            m.scalar("y_scale", 0.02f), m.constant<int8_t>("y_zero", DType::i8, {}, {-3})},
                          {4, 6});
  m.output(with_dtype(m, y, DType::i8));
  check_within_one_step(m.g);
  CHECK(count_prefix(m.g, "matmul:") == 1);
}

// A quantized residual sum, DequantizeLinear x2 -> Add [-> Relu] -> QuantizeLinear, is one host pass
// with ref's float arithmetic: exact, also on rounding ties (sums of multiples of 0.02 and 0.03
// divided by 0.04 hit x.5 often). With a third reader of the sum it is not a group: the nodes
// run alone (reorders, an f32 binary, a quantizing binary division), still exactly.
TEST_CASE("onednn int8: DequantizeLinear x2 -> Add [-> Relu] -> QuantizeLinear, exactly as ref") {
  for (const int variant : {0, 1, 2}) {   // plain, + Relu, the sum also an output
    FunctionBuilder b;
    const Shape s{1, 8, 5, 5};
    const ValueId a = b.input("a", s, DType::u8), c = b.input("c", s, DType::i8);
    const ValueId as = b.scalar("a_scale", 0.02f), az = b.constant<uint8_t>("a_zero", DType::u8, {}, {128});
    const ValueId cs = b.scalar("c_scale", 0.03f), cz = b.constant<int8_t>("c_zero", DType::i8, {}, {7});
    ValueId sum = b.node("Add", {b.node("DequantizeLinear", {a, as, az}, s), b.node("DequantizeLinear", {c, cs, cz}, s)}, s);
    if (variant == 1) sum = b.node("Relu", {sum}, s);
    if (variant == 2) b.output(sum);
    b.output(with_dtype(b, b.node("QuantizeLinear", {sum, b.scalar("y_scale", 0.04f), b.constant<uint8_t>("y_zero", DType::u8, {}, {100})}, s),
                        DType::u8));
    INFO("variant " << variant);
    check_within_one_step(b.g, 0.0);
    CHECK(count_prefix(b.g, "host:quantized_add") == (variant == 2 ? 0u : 1u));
    CHECK(count_prefix(b.g, "binary:") == (variant == 2 ? 2u : 0u));
  }
}

TEST_CASE("onednn int8: what oneDNN 2.x cannot take is refused, not computed wrong") {
  SECTION("u8 weights (ONNX Runtime's dynamic quantization writes them)") {
    FunctionBuilder b;
    const ValueId xq = b.input("xq", {1, 4, 6, 6}, DType::u8);
    const ValueId w = b.constant<uint8_t>("w", DType::u8, {2, 4, 3, 3}, random_ints<uint8_t>(72, 0, 255, 14));
    const ValueId y = b.node("QLinearConv", {xq, b.scalar("x_scale", 0.02f), b.constant<uint8_t>("x_zero", DType::u8, {}, {128}), w,
                                            b.scalar("w_scale", 0.01f), b.constant<uint8_t>("w_zero", DType::u8, {}, {128}),
                                            b.scalar("y_scale", 0.05f), b.constant<uint8_t>("y_zero", DType::u8, {}, {0})},
                             {1, 2, 4, 4});
    b.output(with_dtype(b, y, DType::u8));
    CHECK_THROWS_AS(make_backend_compiler("onednn")->compile(b.g), KernelUnsupported);
  }
  SECTION("a weight zero point other than 0: the group's nodes run one by one, still matching ref") {
    FunctionBuilder b;
    const Shape xs{1, 4, 6, 6}, ys{1, 2, 6, 6};
    const ValueId xq = b.input("xq", xs, DType::u8);
    const ValueId x = b.node("DequantizeLinear", {xq, b.scalar("x_scale", 0.02f), b.constant<uint8_t>("x_zero", DType::u8, {}, {128})}, xs);
    const ValueId wq = b.constant<int8_t>("wq", DType::i8, {2, 4, 3, 3}, random_ints<int8_t>(72, -127, 127, 15));
    const ValueId w = b.node("DequantizeLinear", {wq, b.scalar("w_scale", 0.01f), b.constant<int8_t>("w_zero", DType::i8, {}, {3})}, {2, 4, 3, 3});
    const ValueId y = b.node("Conv", {x, w}, ys, {{"pads", I{1, 1, 1, 1}}});
    b.output(with_dtype(b, b.node("QuantizeLinear", {y, b.scalar("y_scale", 0.05f), b.constant<uint8_t>("y_zero", DType::u8, {}, {128})}, ys),
                        DType::u8));
    check_within_one_step(b.g);
    std::string why;
    CHECK_FALSE(onednn::match_int8(b.g, b.g.consumers(), b.g.value(y).producer, &why));
    CHECK(why == "a weight zero point other than 0");
  }
}

// ONNX Runtime's dynamic quantization: u8 weights with a zero point, the source's zero point a
// function input (DynamicQuantizeLinear's output). Results are int32 sums: exactly ref's.
TEST_CASE("onednn int8: ConvInteger and MatMulInteger with u8 weights and zero points, exactly") {
  for (const int64_t g : {int64_t{1}, int64_t{2}})
    for (const bool u8_weights : {true, false})
    for (const bool cast : {false, true}) {   // a Cast to f32 after it is taken in
      FunctionBuilder b;
      const Shape xs{1, 4, 7, 7}, ys{1, 6, 7, 7};
      const ValueId x = b.input("x", xs, DType::u8), xz = b.input("x_zero", {}, DType::u8);
      const DType wt = u8_weights ? DType::u8 : DType::i8;
      const ValueId w = u8_weights ? b.constant<uint8_t>("w", wt, {6, 4 / g, 3, 3}, random_ints<uint8_t>(static_cast<size_t>(6 * 4 / g * 9), 0, 255, 16))
                                   : b.constant<int8_t>("w", wt, {6, 4 / g, 3, 3}, random_ints<int8_t>(static_cast<size_t>(6 * 4 / g * 9), -128, 127, 16));
      const ValueId wz = u8_weights ? b.constant<uint8_t>("w_zero", wt, {}, {131}) : b.constant<int8_t>("w_zero", wt, {}, {0});
      const ValueId y = with_dtype(b, b.node("ConvInteger", {x, w, xz, wz}, ys, {{"pads", I{1, 1, 1, 1}}, {"group", g}}), DType::i32);
      b.output(cast ? b.node("Cast", {y}, ys, {{"to", int64_t{1}}}) : y);
      INFO("group " << g << ", u8 weights " << u8_weights << ", cast " << cast);
      check_within_one_step(b.g, 0.0);
      CHECK(count_prefix(b.g, "convolution:") == (u8_weights ? 2u : 1u));
      CHECK(count_prefix(b.g, "reorder:") == 1u);   // the source into channels-last only
    }
  FunctionBuilder b;
  const ValueId a = b.input("a", {2, 3, 32}, DType::u8), az = b.input("a_zero", {}, DType::u8);
  const ValueId w = b.constant<uint8_t>("b", DType::u8, {32, 5}, random_ints<uint8_t>(160, 0, 255, 17));
  const ValueId y = b.node("MatMulInteger", {a, w, az, b.constant<uint8_t>("b_zero", DType::u8, {}, {140})}, {2, 3, 5});
  b.output(with_dtype(b, y, DType::i32));
  check_within_one_step(b.g, 0.0);
  CHECK(count_prefix(b.g, "matmul:") == 2);
}

// An int8 weight dequantized per output channel outside a group (its convolution reads a float
// source): the DequantizeLinear is a reorder with per-channel scales, the convolution f32.
TEST_CASE("onednn int8: a DequantizeLinear per axis alone is a reorder with per-channel scales") {
  FunctionBuilder b;
  const Shape xs{1, 4, 6, 6}, ys{1, 3, 6, 6};
  const ValueId x = b.input("x", xs);
  const ValueId wq = b.constant<int8_t>("wq", DType::i8, {3, 4, 3, 3}, random_ints<int8_t>(108, -127, 127, 18));
  const ValueId ws = b.constant<float>("w_scale", DType::f32, {3}, {0.01f, 0.02f, 0.005f});
  const ValueId wz = b.constant<int8_t>("w_zero", DType::i8, {3}, {0, 0, 0});
  const ValueId w = b.node("DequantizeLinear", {wq, ws, wz}, {3, 4, 3, 3}, {{"axis", int64_t{0}}});
  b.output(b.node("Conv", {x, w}, ys, {{"pads", I{1, 1, 1, 1}}}));
  tessera::testing::check_against_ref("onednn", b.g);
  CHECK(count_prefix(b.g, "reorder:") >= 1);
  CHECK(count_prefix(b.g, "convolution:") == 1);
}

// The memory plan (onednn_memory_plan.h) over int8 functions: every int8 host step lists what it
// reads and writes, so a chain of u8 groups with a quantized residual sum and a float bias (a
// function input, divided into accumulator units by a host step each run), and a chain of
// DynamicQuantizeLinear -> ConvInteger (u8 weights with a zero point) -> Cast, get an arena of a
// few of their buffers; one compiled function, run on two inputs, matches ref each time.
namespace {

// xq (u8) -> DequantizeLinear -> Conv 3x3 (s8 weights per channel, float bias input) -> Relu ->
// QuantizeLinear (u8). Small weight scales: a result one step from ref's moves the next group's
// by well under a step, so a long chain stays within a step of ref (larger ones amplify it, with
// or without the memory plan).
ValueId qdq_conv_on(FunctionBuilder& b, ValueId xq, float x_scale, float y_scale, uint32_t seed) {
  const Shape s = b.g.value(xq).type.shape;   // a copy: building adds values
  const int64_t c = s[1];
  const ValueId x = b.node("DequantizeLinear", {xq, b.scalar("xs" + std::to_string(seed), x_scale),
                                                b.constant<uint8_t>("xz" + std::to_string(seed), DType::u8, {}, {0})}, s);
  const ValueId wq = b.constant<int8_t>("wq" + std::to_string(seed), DType::i8, {c, c, 3, 3}, random_ints<int8_t>(static_cast<size_t>(c * c * 9), -127, 127, seed));
  const ValueId ws = b.constant<float>("ws" + std::to_string(seed), DType::f32, {c}, random_floats(static_cast<size_t>(c), 0.0005f, 0.002f, seed + 1));
  const ValueId wz = b.constant<int8_t>("wz" + std::to_string(seed), DType::i8, {c}, std::vector<int8_t>(static_cast<size_t>(c), 0));
  const ValueId w = b.node("DequantizeLinear", {wq, ws, wz}, {c, c, 3, 3}, {{"axis", int64_t{0}}});
  const ValueId y = b.node("Relu", {b.node("Conv", {x, w, b.input("bias" + std::to_string(seed), {c})}, s, {{"pads", I{1, 1, 1, 1}}})}, s);
  return with_dtype(b, b.node("QuantizeLinear", {y, b.scalar("ys" + std::to_string(seed), y_scale),
                                                 b.constant<uint8_t>("yz" + std::to_string(seed), DType::u8, {}, {0})}, s), DType::u8);
}

// Runs one compiled function on two input sets; each result within one step of ref's.
void check_twice(const Graph& fn) {
  auto compiled = make_backend_compiler("onednn")->compile(fn);
  for (const uint32_t seed : {7u, 8u}) {
    const auto ins = inputs_for(fn, seed);
    const auto want = run("ref", fn, ins);
    std::vector<HostTensor> got;
    for (ValueId v : fn.outputs) got.emplace_back(fn.value(v).type);
    std::vector<ConstTensorView> iv;
    std::vector<TensorView> ov;
    for (const HostTensor& t : ins) iv.push_back(t.view());
    for (HostTensor& t : got) ov.push_back(t.view());
    compiled->run(iv, ov);
    for (size_t o = 0; o < want.size(); ++o) {
      size_t far = 0;
      double worst = 0.0;
      int64_t nonzero = 0;
      for (int64_t i = 0; i < want[o].type.numel(); ++i) {
        double a = 0, g = 0;
        switch (want[o].type.dtype) {
          case DType::u8: a = want[o].as<uint8_t>()[i], g = got[o].as<uint8_t>()[i]; break;
          case DType::i32: a = want[o].as<int32_t>()[i], g = got[o].as<int32_t>()[i]; break;
          default: a = want[o].as<float>()[i], g = got[o].as<float>()[i];
        }
        far += std::fabs(a - g) > 1.0;
        nonzero += a != 0.0;
        worst = std::max(worst, std::fabs(a - g));
      }
      INFO("run with seed " << seed << ", output " << o << ": worst " << worst << ", " << far << " beyond one step, " << nonzero
                             << " of ref's nonzero");
      CHECK(far == 0);
      CHECK(nonzero > want[o].type.numel() / 4);   // not a chain that died out
    }
  }
}

size_t int8_workspace(const Graph& fn) { return onednn::OnednnProgram(fn, dnnl::engine(dnnl::engine::kind::cpu, 0)).workspace_bytes(); }

}  // namespace

TEST_CASE("onednn int8: u8 groups with a quantized residual sum and a host-divided bias share one arena") {
  FunctionBuilder b;
  const Shape s{1, 16, 32, 32};
  const ValueId xq = b.input("xq", s, DType::u8);
  const ValueId a = qdq_conv_on(b, xq, 0.02f, 0.05f, 20);
  const ValueId c = qdq_conv_on(b, a, 0.05f, 0.05f, 30);
  const ValueId sum = b.node("Add", {b.node("DequantizeLinear", {c, b.scalar("cs", 0.05f), b.constant<uint8_t>("cz", DType::u8, {}, {0})}, s),
                                     b.node("DequantizeLinear", {a, b.scalar("as", 0.05f), b.constant<uint8_t>("az", DType::u8, {}, {0})}, s)},
                             s);
  ValueId y = with_dtype(b, b.node("QuantizeLinear", {sum, b.scalar("ss", 0.08f), b.constant<uint8_t>("sz", DType::u8, {}, {0})}, s), DType::u8);
  for (uint32_t seed = 40; seed < 120; seed += 10) y = qdq_conv_on(b, y, 0.08f, 0.08f, seed);
  b.output(y);
  CHECK(count_prefix(b.g, "host:quantized_add") == 1);
  CHECK(count_prefix(b.g, "host:bias_to_accumulator") == 10);
  check_twice(b.g);
  // Eleven u8 results of 16 KiB (and the source's nhwc copy), one allocation each without the
  // plan; the reordered weights (2.3 KiB a conv) stay outside the arena.
  const size_t activations = 11 * static_cast<size_t>(b.g.value(xq).type.numel());
  INFO("workspace " << int8_workspace(b.g) << " bytes, activations " << activations);
  CHECK(int8_workspace(b.g) < activations * 3 / 4);
}

TEST_CASE("onednn int8: DynamicQuantizeLinear -> ConvInteger -> Cast chains share one arena") {
  FunctionBuilder b;
  const Shape s{1, 8, 32, 32};
  ValueId x = b.input("x", s);
  for (uint32_t k = 0; k < 4; ++k) {
    // DynamicQuantizeLinear(x) -> (q u8, scale, zero point u8): three outputs, made by hand.
    const std::string n = "dql" + std::to_string(k);
    const ValueId q = b.g.add_value(Value{n + "_q", TensorType{DType::u8, s}, ValueKind::Intermediate});
    const ValueId scale = b.g.add_value(Value{n + "_scale", TensorType{DType::f32, {}}, ValueKind::Intermediate});
    const ValueId zero = b.g.add_value(Value{n + "_zero", TensorType{DType::u8, {}}, ValueKind::Intermediate});
    Node dql;
    dql.name = n;
    dql.op = "DynamicQuantizeLinear";
    dql.inputs = {x};
    dql.outputs = {q, scale, zero};
    b.g.add_node(std::move(dql));
    const ValueId w = b.constant<uint8_t>("w" + std::to_string(k), DType::u8, {8, 8, 3, 3}, random_ints<uint8_t>(8 * 8 * 9, 0, 255, 50 + k));
    const ValueId wz = b.constant<uint8_t>("wz" + std::to_string(k), DType::u8, {}, {131});
    const ValueId y = with_dtype(b, b.node("ConvInteger", {q, w, zero, wz}, s, {{"pads", I{1, 1, 1, 1}}}), DType::i32);
    x = b.node("Cast", {y}, s, {{"to", int64_t{1}}});
  }
  b.output(x);
  CHECK(count_prefix(b.g, "host:dynamic_quantize") == 4);
  CHECK(count_prefix(b.g, "host:zero_point") == 4);
  CHECK(count_prefix(b.g, "host:weight_zero_point") == 4);
  check_twice(b.g);
  // Each stage's int32 products and f32 result, 32 KiB each; one allocation each without the plan.
  const size_t activations = 4 * 2 * static_cast<size_t>(b.g.value(x).type.numel()) * 4;
  INFO("workspace " << int8_workspace(b.g) << " bytes, activations " << activations);
  CHECK(int8_workspace(b.g) < activations / 2);
}
