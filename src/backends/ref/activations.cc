// Activation functions: unary, same shape, most with attributes (alpha, beta, gamma...).
//
// Each kernel reads its attributes once per call (ONNX defaults when absent) and applies an
// element function in the input's precision. Clip takes its bounds as optional inputs (opset 11+)
// or as attributes (opset 6), and works on integers too; a missing bound is unbounded.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;

double alpha_of(const Node& n, double dflt) { return attr_float(n.attrs, "alpha", dflt); }

NodeKernel clip_kernel() {
  return [](const Node& n, Inputs in, std::span<const TensorView> out) {
    expect_inputs(n, in, 1, 3);
    expect_outputs(n, out, 1, 1);
    expect_shape(n, out[0], in[0].type.shape);
    visit_dtype(n, in[0].type.dtype, [&]<typename T>() {
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (has_input(in, 1)) lo = static_cast<T>(read_scalar(n, in[1]));
      else if (n.attrs.count("min")) lo = static_cast<T>(attr_float(n.attrs, "min", 0));
      if (has_input(in, 2)) hi = static_cast<T>(read_scalar(n, in[2]));
      else if (n.attrs.count("max")) hi = static_cast<T>(attr_float(n.attrs, "max", 0));
      const T* x = in[0].as<T>();
      T* y = out[0].as<T>();
      // min(max(x, lo), hi), as ONNX defines it (lo > hi gives hi).
      for (int64_t i = 0; i < in[0].numel(); ++i) y[i] = std::min(std::max(x[i], lo), hi);
    });
  };
}

}  // namespace

void register_activations(KernelRegistry& r) {
  r.add("Relu", simple_unary<false>([](auto x) { return x > decltype(x)(0) ? x : decltype(x)(0); }));
  r.add("Tanh", simple_unary<true>([](auto x) { return std::tanh(x); }));
  r.add("Sigmoid", simple_unary<true>([](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); }));
  r.add("Softplus", simple_unary<true>([](auto x) { return std::log1p(std::exp(x)); }));
  r.add("Softsign", simple_unary<true>([](auto x) { return x / (decltype(x)(1) + std::abs(x)); }));
  r.add("HardSwish", simple_unary<true>([](auto x) {
          using T = decltype(x);
          return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
        }));
  r.add("LeakyRelu", unary_kernel<true>([](const Node& n, Inputs) {
          const double a = alpha_of(n, 0.01);
          return [a](auto x) { return x >= 0 ? x : static_cast<decltype(x)>(a * x); };
        }));
  r.add("HardSigmoid", unary_kernel<true>([](const Node& n, Inputs) {
          const double a = alpha_of(n, 0.2), b = attr_float(n.attrs, "beta", 0.5);
          return [a, b](auto x) { return static_cast<decltype(x)>(std::max(0.0, std::min(1.0, a * x + b))); };
        }));
  r.add("Elu", unary_kernel<true>([](const Node& n, Inputs) {
          const double a = alpha_of(n, 1.0);
          return [a](auto x) { return x >= 0 ? x : static_cast<decltype(x)>(a * std::expm1(double(x))); };
        }));
  r.add("Celu", unary_kernel<true>([](const Node& n, Inputs) {
          const double a = alpha_of(n, 1.0);
          return [a](auto x) {
            return static_cast<decltype(x)>(std::max(0.0, double(x)) + std::min(0.0, a * std::expm1(x / a)));
          };
        }));
  r.add("Selu", unary_kernel<true>([](const Node& n, Inputs) {
          const double a = alpha_of(n, 1.67326319217681884765625);
          const double g = attr_float(n.attrs, "gamma", 1.05070102214813232421875);
          return [a, g](auto x) {
            return static_cast<decltype(x)>(x > 0 ? g * x : g * a * std::expm1(double(x)));
          };
        }));
  r.add("ThresholdedRelu", unary_kernel<true>([](const Node& n, Inputs) {
          const double a = alpha_of(n, 1.0);
          return [a](auto x) { return x > a ? x : decltype(x)(0); };
        }));
  r.add("Shrink", unary_kernel<true>([](const Node& n, Inputs) {
          const double bias = attr_float(n.attrs, "bias", 0.0), lambd = attr_float(n.attrs, "lambd", 0.5);
          return [bias, lambd](auto x) {
            using T = decltype(x);
            return x < -lambd ? static_cast<T>(x + bias) : x > lambd ? static_cast<T>(x - bias) : T(0);
          };
        }));
  r.add("Clip", clip_kernel());
}

}  // namespace tessera::ref
