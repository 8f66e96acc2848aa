// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax, ArgMin, and
// CumSum (the running sum along one axis; exclusive and reverse as attributes).
//
// Axes come from the `axes` input (ReduceSum since opset 13, every Reduce* since 18) or the
// `axes` attribute (the others up to opset 17); no axes means all, unless noop_with_empty_axes
// makes it the identity. The output keeps reduced dimensions as 1 (keepdims = 1) or drops them;
// either way its element order is that of the kept-dims shape, so one accumulator per output
// element, addressed through broadcast strides, serves every reduction. Accumulation is in double.
#include <cmath>
#include <limits>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

struct Reducer {
  double init;
  double (*step)(double acc, double x);
  double (*finish)(double acc, int64_t count);
};

double keep(double acc, int64_t) { return acc; }

// The input shape with reduced dimensions set to 1, and the output shape the op computes.
std::pair<Shape, Shape> reduced_shapes(const Node& n, const Shape& xs, std::vector<int64_t> axes, bool noop_empty) {
  const int rank = static_cast<int>(xs.size());
  Shape kept = xs;
  if (axes.empty() && !noop_empty)
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  std::vector<bool> reduced(xs.size(), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(normalize_axis(n, a, rank))] = true;
  Shape dropped;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (reduced[d]) kept[d] = 1;
    else dropped.push_back(xs[d]);
  }
  return {kept, attr_int(n.attrs, "keepdims", 1) ? kept : dropped};
}

NodeKernel reduce(Reducer red) {
  return [red](const Node& n, Inputs in, Outputs out) {
    expect_inputs(n, in, 1, 2);
    expect_outputs(n, out, 1, 1);
    const Shape& xs = in[0].type.shape;
    const auto axes = has_input(in, 1) ? read_ints(n, in[1]) : attr_ints(n.attrs, "axes");
    const auto [kept, want] = reduced_shapes(n, xs, axes, attr_int(n.attrs, "noop_with_empty_axes", 0) != 0);
    expect_shape(n, out[0], want);
    const int64_t groups = product_of(kept), count = groups ? in[0].numel() / groups : 0;
    std::vector<double> acc(static_cast<size_t>(groups), red.init);
    const DType t = in[0].type.dtype;
    if (t == DType::f16 || t == DType::bf16 || t == DType::boolean) unsupported(n, "dtype " + std::string(dtype_name(t)));
    const std::vector<int64_t> strides[] = {broadcast_strides(kept, xs)};
    for_each_broadcast(xs, strides, [&](int64_t i, const int64_t* o) {
      double& a = acc[static_cast<size_t>(o[0])];
      a = red.step(a, load_as_double(t, in[0].data, i));
    });
    for (int64_t g = 0; g < groups; ++g) store_from_double(t, out[0].data, g, red.finish(acc[static_cast<size_t>(g)], count));
  };
}

// ArgMax / ArgMin along one axis; ties go to the first index, or the last with select_last_index.
template <bool IsMax>
void arg_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const int64_t axis = normalize_axis(n, attr_int(n.attrs, "axis", 0), static_cast<int>(xs.size()));
  const auto [kept, want] = reduced_shapes(n, xs, {axis}, false);
  expect_shape(n, out[0], want);
  const bool last = attr_int(n.attrs, "select_last_index", 0) != 0;
  const int64_t len = xs[static_cast<size_t>(axis)];
  const int64_t inner = product_of(Shape(xs.begin() + axis + 1, xs.end()));
  const int64_t outer = (len * inner) != 0 ? in[0].numel() / (len * inner) : 0;
  const DType t = in[0].type.dtype;
  auto* y = out[0].as<int64_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < len; ++j) {
        const double v = load_as_double(t, in[0].data, (o * len + j) * inner + i);
        const double b = load_as_double(t, in[0].data, (o * len + best) * inner + i);
        const bool better = IsMax ? (v > b || (last && v == b)) : (v < b || (last && v == b));
        if (better) best = j;
      }
      y[o * inner + i] = best;
    }
}

void cumsum_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  expect_shape(n, out[0], xs);
  const auto axis = static_cast<size_t>(normalize_axis(n, static_cast<int64_t>(read_scalar(n, in[1])), static_cast<int>(xs.size())));
  const bool exclusive = attr_int(n.attrs, "exclusive", 0) != 0, reverse = attr_int(n.attrs, "reverse", 0) != 0;
  const int64_t len = xs[axis];
  const int64_t inner = product_of(Shape(xs.begin() + static_cast<std::ptrdiff_t>(axis) + 1, xs.end()));
  const int64_t outer = (len * inner) != 0 ? in[0].numel() / (len * inner) : 0;
  visit_dtype(n, in[0].type.dtype, [&]<typename T>() {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T acc = T(0);
        for (int64_t s = 0; s < len; ++s) {
          const int64_t j = reverse ? len - 1 - s : s;
          const int64_t at = (o * len + j) * inner + i;
          const T x = in[0].as<T>()[at];
          if (!exclusive) acc = static_cast<T>(acc + x);
          out[0].as<T>()[at] = acc;
          if (exclusive) acc = static_cast<T>(acc + x);
        }
      }
  });
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  auto add = [](double a, double x) { return a + x; };
  r.add("ReduceSum", reduce({0.0, add, keep}));
  r.add("ReduceMean", reduce({0.0, add, [](double a, int64_t c) { return c ? a / static_cast<double>(c) : a; }}));
  r.add("ReduceMax", reduce({-inf, [](double a, double x) { return std::max(a, x); }, keep}));
  r.add("ReduceMin", reduce({inf, [](double a, double x) { return std::min(a, x); }, keep}));
  r.add("ReduceProd", reduce({1.0, [](double a, double x) { return a * x; }, keep}));
  r.add("ReduceL1", reduce({0.0, [](double a, double x) { return a + std::abs(x); }, keep}));
  r.add("ReduceL2", reduce({0.0, [](double a, double x) { return a + x * x; }, [](double a, int64_t) { return std::sqrt(a); }}));
  r.add("ReduceSumSquare", reduce({0.0, [](double a, double x) { return a + x * x; }, keep}));
  r.add("ReduceLogSum", reduce({0.0, add, [](double a, int64_t) { return std::log(a); }}));
  r.add("ReduceLogSumExp", reduce({0.0, [](double a, double x) { return a + std::exp(x); },
                                   [](double a, int64_t) { return std::log(a); }}));
  r.add("ArgMax", arg_kernel<true>);
  r.add("ArgMin", arg_kernel<false>);
  r.add("CumSum", cumsum_kernel);
}

}  // namespace tessera::ref
