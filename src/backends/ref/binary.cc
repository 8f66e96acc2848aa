// Broadcasting ops: arithmetic, comparison, logic, PRelu, Where and the variadic Min/Max/Sum/Mean.
//
// All follow numpy broadcasting (multidirectional; PRelu's slope is unidirectional to X, which
// the same rule covers since the output has X's shape). One helper walks the output once with an
// element offset per input (for_each_broadcast), so each op below is only its element formula.
// Integer division truncates toward zero and yields 0 for a zero divisor instead of trapping;
// Mod follows `fmod`: 0 = sign of the divisor (Python), 1 = sign of the dividend (C fmod).
#include <algorithm>
#include <cmath>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

// Checks out's shape against the broadcast of all inputs and visits every output element.
template <typename F>
void broadcast_each(const Node& n, Inputs in, const TensorView& out, F&& f) {
  std::vector<Shape> shapes;
  for (const auto& v : in) shapes.push_back(v.type.shape);
  const Shape shape = broadcast_shapes(n, shapes);
  expect_shape(n, out, shape);
  std::vector<std::vector<int64_t>> strides;
  for (const auto& s : shapes) strides.push_back(broadcast_strides(s, shape));
  for_each_broadcast(shape, strides, f);
}

void same_dtypes(const Node& n, Inputs in, size_t from = 0) {
  for (size_t i = from + 1; i < in.size(); ++i)
    if (in[i].type.dtype != in[from].type.dtype) bad_node(n, "inputs have different dtypes");
}

// out[i] = op(a, b) with a, b and out all of the input dtype.
template <typename Op>
NodeKernel arithmetic(Op op) {
  return [op](const Node& n, Inputs in, Outputs out) {
    expect_inputs(n, in, 2, 2);
    expect_outputs(n, out, 1, 1);
    same_dtypes(n, in);
    visit_dtype(n, in[0].type.dtype, [&]<typename T>() {
      const T* a = in[0].as<T>();
      const T* b = in[1].as<T>();
      T* y = out[0].as<T>();
      broadcast_each(n, in, out[0], [&](int64_t i, const int64_t* o) { y[i] = static_cast<T>(op(a[o[0]], b[o[1]])); });
    });
  };
}

// out[i] = op(a, b) as bool (comparisons, logic).
template <typename Op>
NodeKernel predicate(Op op) {
  return [op](const Node& n, Inputs in, Outputs out) {
    expect_inputs(n, in, 2, 2);
    expect_outputs(n, out, 1, 1);
    same_dtypes(n, in);
    if (out[0].type.dtype != DType::boolean) bad_node(n, "output must be bool");
    auto* y = out[0].as<uint8_t>();
    visit_dtype(n, in[0].type.dtype, [&]<typename T>() {
      const T* a = in[0].as<T>();
      const T* b = in[1].as<T>();
      broadcast_each(n, in, out[0], [&](int64_t i, const int64_t* o) { y[i] = op(a[o[0]], b[o[1]]) ? 1 : 0; });
    });
  };
}

// Sum, Mean, Max, Min over one or more inputs: fold op over the inputs, then finish(acc, count).
template <typename Op, typename Finish>
NodeKernel variadic(Op op, Finish finish) {
  return [op, finish](const Node& n, Inputs in, Outputs out) {
    expect_inputs(n, in, 1, in.size());
    expect_outputs(n, out, 1, 1);
    same_dtypes(n, in);
    visit_dtype(n, in[0].type.dtype, [&]<typename T>() {
      T* y = out[0].as<T>();
      const size_t k = in.size();
      broadcast_each(n, in, out[0], [&](int64_t i, const int64_t* o) {
        T acc = in[0].as<T>()[o[0]];
        for (size_t j = 1; j < k; ++j) acc = static_cast<T>(op(acc, in[j].as<T>()[o[j]]));
        y[i] = finish(acc, k);
      });
    });
  };
}

template <typename T> T divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) return b == 0 ? T(0) : static_cast<T>(a / b);
  else return a / b;
}

NodeKernel mod_kernel() {
  return [](const Node& n, Inputs in, Outputs out) {
    const bool c_fmod = attr_int(n.attrs, "fmod", 0) != 0;
    arithmetic([c_fmod](auto a, auto b) {
      using T = decltype(a);
      if constexpr (std::is_floating_point_v<T>) {
        T r = std::fmod(a, b);
        if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      } else {
        if (b == 0) return T(0);
        T r = static_cast<T>(a % b);
        if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      }
    })(n, in, out);
  };
}

// Pow allows the exponent to have another dtype than the base; the result has the base's.
void pow_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  const DType base = in[0].type.dtype, expo = in[1].type.dtype;
  broadcast_each(n, in, out[0], [&](int64_t i, const int64_t* o) {
    const double v = std::pow(load_as_double(base, in[0].data, o[0]), load_as_double(expo, in[1].data, o[1]));
    store_from_double(base, out[0].data, i, v);
  });
}

void prelu_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  same_dtypes(n, in);
  visit_dtype(n, in[0].type.dtype, [&]<typename T>() {
    const T* x = in[0].as<T>();
    const T* slope = in[1].as<T>();
    T* y = out[0].as<T>();
    broadcast_each(n, in, out[0], [&](int64_t i, const int64_t* o) {
      y[i] = x[o[0]] < T(0) ? static_cast<T>(slope[o[1]] * x[o[0]]) : x[o[0]];
    });
  });
}

void where_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 3, 3);
  expect_outputs(n, out, 1, 1);
  if (in[0].type.dtype != DType::boolean) bad_node(n, "condition must be bool");
  same_dtypes(n, in, 1);
  const size_t size = dtype_size(in[1].type.dtype);
  const auto* cond = in[0].as<uint8_t>();
  const auto* x = in[1].as<std::byte>();
  const auto* y = in[2].as<std::byte>();
  auto* z = out[0].as<std::byte>();
  broadcast_each(n, in, out[0], [&](int64_t i, const int64_t* o) {
    const std::byte* src = cond[o[0]] ? x + o[1] * static_cast<int64_t>(size) : y + o[2] * static_cast<int64_t>(size);
    std::copy(src, src + size, z + i * static_cast<int64_t>(size));
  });
}

}  // namespace

void register_binary(KernelRegistry& r) {
  r.add("Add", arithmetic([](auto a, auto b) { return a + b; }));
  r.add("Sub", arithmetic([](auto a, auto b) { return a - b; }));
  r.add("Mul", arithmetic([](auto a, auto b) { return a * b; }));
  r.add("Div", arithmetic([](auto a, auto b) { return divide(a, b); }));
  r.add("Mod", mod_kernel());
  r.add("Pow", pow_kernel);
  r.add("PRelu", prelu_kernel);
  r.add("Equal", predicate([](auto a, auto b) { return a == b; }));
  r.add("Less", predicate([](auto a, auto b) { return a < b; }));
  r.add("LessOrEqual", predicate([](auto a, auto b) { return a <= b; }));
  r.add("Greater", predicate([](auto a, auto b) { return a > b; }));
  r.add("GreaterOrEqual", predicate([](auto a, auto b) { return a >= b; }));
  r.add("And", predicate([](auto a, auto b) { return a && b; }));
  r.add("Or", predicate([](auto a, auto b) { return a || b; }));
  r.add("Xor", predicate([](auto a, auto b) { return (a != 0) != (b != 0); }));
  r.add("Where", where_kernel);
  auto keep = [](auto acc, size_t) { return acc; };
  r.add("Sum", variadic([](auto a, auto b) { return a + b; }, keep));
  r.add("Max", variadic([](auto a, auto b) { return std::max(a, b); }, keep));
  r.add("Min", variadic([](auto a, auto b) { return std::min(a, b); }, keep));
  r.add("Mean", variadic([](auto a, auto b) { return a + b; },
                         [](auto acc, size_t k) { return static_cast<decltype(acc)>(acc / static_cast<decltype(acc)>(k)); }));
}

}  // namespace tessera::ref
