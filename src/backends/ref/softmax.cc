// Softmax, LogSoftmax and Hardmax along one axis (opset 13 semantics: the axis alone, not the
// flattened [axis, rank) block of opsets 1-12; tessera imports opset 13 and later).
//
// The tensor is viewed as [outer, axis, inner]; each of the outer*inner lines along the axis is
// normalized independently, subtracting the line's maximum first for stability. Hardmax marks the
// first maximum of each line with 1.
#include <algorithm>
#include <cmath>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

enum class Mode { Softmax, LogSoftmax, Hardmax };

template <Mode M>
void softmax_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  expect_shape(n, out[0], xs);
  const int rank = static_cast<int>(xs.size());
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", -1), rank));
  const int64_t len = rank ? xs[axis] : 1;
  const int64_t inner = product_of(Shape(xs.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(axis + 1, xs.size())), xs.end()));
  const int64_t outer = (len * inner) != 0 ? in[0].numel() / (len * inner) : 0;
  visit_float(n, in[0].type.dtype, [&]<typename T>() {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* x = in[0].as<T>() + o * len * inner + i;
        T* y = out[0].as<T>() + o * len * inner + i;
        int64_t arg = 0;
        for (int64_t j = 1; j < len; ++j)
          if (x[j * inner] > x[arg * inner]) arg = j;
        const double mx = static_cast<double>(x[arg * inner]);
        if constexpr (M == Mode::Hardmax) {
          for (int64_t j = 0; j < len; ++j) y[j * inner] = T(j == arg ? 1 : 0);
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < len; ++j) sum += std::exp(static_cast<double>(x[j * inner]) - mx);
        for (int64_t j = 0; j < len; ++j) {
          const double shifted = static_cast<double>(x[j * inner]) - mx;
          y[j * inner] = static_cast<T>(M == Mode::Softmax ? std::exp(shifted) / sum : shifted - std::log(sum));
        }
      }
  });
}

}  // namespace

void register_softmax(KernelRegistry& r) {
  r.add("Softmax", softmax_kernel<Mode::Softmax>);
  r.add("LogSoftmax", softmax_kernel<Mode::LogSoftmax>);
  r.add("Hardmax", softmax_kernel<Mode::Hardmax>);
}

}  // namespace tessera::ref
