// Unary math ops (ONNX "Math" elementwise): one output element per input element, same shape.
//
// Float-only ops compute in the input's own precision (f32 in float, as ONNX Runtime does);
// Abs, Neg and Sign also accept integer tensors. Round is half-to-even (std::nearbyint in the
// default rounding mode), as ONNX specifies. Not, IsNaN and IsInf produce bool tensors.
#include <cmath>
#include <limits>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

template <typename T> T sign_of(T x) { return static_cast<T>((T(0) < x) - (x < T(0))); }

// A kernel from a float element test to a bool output (IsNaN, IsInf).
template <typename Make>
NodeKernel predicate_kernel(Make make) {
  return [make](const Node& n, std::span<const ConstTensorView> in, std::span<const TensorView> out) {
    expect_inputs(n, in, 1, 1);
    expect_outputs(n, out, 1, 1);
    expect_shape(n, out[0], in[0].type.shape);
    auto test = make(n);
    visit_float(n, in[0].type.dtype, [&]<typename T>() {
      const T* x = in[0].as<T>();
      auto* y = out[0].as<uint8_t>();
      for (int64_t i = 0; i < in[0].numel(); ++i) y[i] = test(static_cast<double>(x[i])) ? 1 : 0;
    });
  };
}

}  // namespace

void register_unary_math(KernelRegistry& r) {
  r.add("Abs", simple_unary<false>([](auto x) {
          using T = decltype(x);
          if constexpr (std::is_unsigned_v<T>) return x;
          else return static_cast<T>(x < T(0) ? -x : x);
        }));
  r.add("Neg", simple_unary<false>([](auto x) { return -x; }));
  r.add("Sign", simple_unary<false>([](auto x) { return sign_of(x); }));
  r.add("Exp", simple_unary<true>([](auto x) { return std::exp(x); }));
  r.add("Log", simple_unary<true>([](auto x) { return std::log(x); }));
  r.add("Sqrt", simple_unary<true>([](auto x) { return std::sqrt(x); }));
  r.add("Reciprocal", simple_unary<true>([](auto x) { return decltype(x)(1) / x; }));
  r.add("Floor", simple_unary<true>([](auto x) { return std::floor(x); }));
  r.add("Ceil", simple_unary<true>([](auto x) { return std::ceil(x); }));
  r.add("Round", simple_unary<true>([](auto x) { return std::nearbyint(x); }));
  r.add("Erf", simple_unary<true>([](auto x) { return std::erf(x); }));
  r.add("Sin", simple_unary<true>([](auto x) { return std::sin(x); }));
  r.add("Cos", simple_unary<true>([](auto x) { return std::cos(x); }));
  r.add("Tan", simple_unary<true>([](auto x) { return std::tan(x); }));
  r.add("Asin", simple_unary<true>([](auto x) { return std::asin(x); }));
  r.add("Acos", simple_unary<true>([](auto x) { return std::acos(x); }));
  r.add("Atan", simple_unary<true>([](auto x) { return std::atan(x); }));
  r.add("Sinh", simple_unary<true>([](auto x) { return std::sinh(x); }));
  r.add("Cosh", simple_unary<true>([](auto x) { return std::cosh(x); }));
  r.add("Asinh", simple_unary<true>([](auto x) { return std::asinh(x); }));
  r.add("Acosh", simple_unary<true>([](auto x) { return std::acosh(x); }));
  r.add("Atanh", simple_unary<true>([](auto x) { return std::atanh(x); }));
  r.add("Not", [](const Node& n, std::span<const ConstTensorView> in, std::span<const TensorView> out) {
    expect_inputs(n, in, 1, 1);
    expect_outputs(n, out, 1, 1);
    expect_shape(n, out[0], in[0].type.shape);
    if (in[0].type.dtype != DType::boolean) bad_node(n, "Not needs a bool input");
    for (int64_t i = 0; i < in[0].numel(); ++i) out[0].as<uint8_t>()[i] = in[0].as<uint8_t>()[i] ? 0 : 1;
  });
  r.add("IsNaN", predicate_kernel([](const Node&) { return [](double x) { return std::isnan(x); }; }));
  r.add("IsInf", predicate_kernel([](const Node& n) {
          const bool neg = attr_int(n.attrs, "detect_negative", 1) != 0;
          const bool pos = attr_int(n.attrs, "detect_positive", 1) != 0;
          return [neg, pos](double x) { return std::isinf(x) && ((x < 0) ? neg : pos); };
        }));
}

}  // namespace tessera::ref
