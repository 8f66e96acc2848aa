// Pooling: MaxPool (with dilations and the optional Indices output), AveragePool (with
// count_include_pad), both with ceil_mode and auto_pad, and GlobalAveragePool/GlobalMaxPool.
//
// A window's taps that fall into the padding are skipped by MaxPool. AveragePool divides by the
// taps inside the input (count_include_pad = 0) or inside the padded input (= 1); with ceil_mode
// a last window may hang past the end padding, and those taps count for neither. Indices are
// flat offsets into X in row-major (storage_order 0) or, per image, column-major (1) order.
#include <algorithm>
#include <limits>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/window.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

enum class PoolKind { Max, Average };

// Visits each output position of one window op: f(out_offset, taps, count_padded) where taps
// lists the flat spatial offsets of the window's taps inside the input.
template <typename F>
void for_each_window(const Window& w, const Shape& in_sp, const Shape& out_sp, F&& f) {
  const size_t k = in_sp.size();
  const int64_t kpos = product_of(w.kernel), opos = product_of(out_sp);
  std::vector<int64_t> oc(k), kc(k), taps;
  for (int64_t o = 0; o < opos; ++o) {
    int64_t rest = o;
    for (size_t d = k; d-- > 0;) { oc[d] = rest % out_sp[d]; rest /= out_sp[d]; }
    taps.clear();
    int64_t padded = 0;
    for (int64_t p = 0; p < kpos; ++p) {
      rest = p;
      for (size_t d = k; d-- > 0;) { kc[d] = rest % w.kernel[d]; rest /= w.kernel[d]; }
      int64_t idx = 0;
      bool inside = true, in_padded = true;
      for (size_t d = 0; d < k; ++d) {
        const int64_t c = oc[d] * w.strides[d] - w.pad_begin[d] + kc[d] * w.dilations[d];
        inside = inside && c >= 0 && c < in_sp[d];
        in_padded = in_padded && c >= -w.pad_begin[d] && c < in_sp[d] + w.pad_end[d];
        idx = idx * in_sp[d] + c;
      }
      padded += in_padded ? 1 : 0;
      if (inside) taps.push_back(idx);
    }
    f(o, taps, padded);
  }
}

// Offset of spatial index `idx` in column-major order (MaxPool storage_order = 1).
int64_t column_major(int64_t idx, const Shape& sp) {
  int64_t out = 0, scale = 1;
  std::vector<int64_t> c(sp.size());
  for (size_t d = sp.size(); d-- > 0;) { c[d] = idx % sp[d]; idx /= sp[d]; }
  for (size_t d = 0; d < sp.size(); ++d) { out += c[d] * scale; scale *= sp[d]; }
  return out;
}

template <PoolKind Kind>
void pool_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, Kind == PoolKind::Max ? 2 : 1);
  const Shape& xs = in[0].type.shape;
  const Shape& ys = out[0].type.shape;
  if (xs.size() < 3 || ys.size() != xs.size() || ys[0] != xs[0] || ys[1] != xs[1])
    bad_node(n, "X and Y must be [N, C, spatial...] alike");
  if (!n.attrs.count("kernel_shape")) bad_node(n, "kernel_shape is required");
  const Shape in_sp(xs.begin() + 2, xs.end()), out_sp(ys.begin() + 2, ys.end());
  const Window w = forward_window(n, {}, in_sp, out_sp, attr_int(n.attrs, "ceil_mode", 0) != 0);
  const bool include_pad = attr_int(n.attrs, "count_include_pad", 0) != 0;
  const bool col_major = attr_int(n.attrs, "storage_order", 0) != 0;
  const int64_t planes = xs[0] * xs[1], ipos = product_of(in_sp), opos = product_of(out_sp);
  int64_t* indices = has_output(out, 1) ? out[1].as<int64_t>() : nullptr;
  auto body = [&]<typename T>() {
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    for_each_window(w, in_sp, out_sp, [&](int64_t o, const std::vector<int64_t>& taps, int64_t padded) {
      for (int64_t p = 0; p < planes; ++p) {
        const T* xp = x + p * ipos;
        if constexpr (Kind == PoolKind::Max) {
          T best = std::numeric_limits<T>::lowest();
          int64_t arg = -1;
          for (int64_t t : taps)
            if (arg < 0 || xp[t] > best) { best = xp[t]; arg = t; }
          y[p * opos + o] = best;
          if (indices) indices[p * opos + o] = p * ipos + (col_major ? column_major(arg, in_sp) : arg);
        } else {
          double sum = 0;
          for (int64_t t : taps) sum += static_cast<double>(xp[t]);
          const auto count = static_cast<double>(include_pad ? padded : static_cast<int64_t>(taps.size()));
          y[p * opos + o] = static_cast<T>(count > 0 ? sum / count : 0.0);
        }
      }
    });
  };
  if constexpr (Kind == PoolKind::Max) visit_dtype(n, in[0].type.dtype, body);
  else visit_float(n, in[0].type.dtype, body);
}

template <PoolKind Kind>
void global_pool_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  if (xs.size() < 2) bad_node(n, "X must be [N, C, ...]");
  Shape want(xs.size(), 1);
  want[0] = xs[0];
  want[1] = xs[1];
  expect_shape(n, out[0], want);
  const int64_t planes = xs[0] * xs[1], size = in[0].numel() / std::max<int64_t>(planes, 1);
  visit_float(n, in[0].type.dtype, [&]<typename T>() {
    for (int64_t p = 0; p < planes; ++p) {
      const T* xp = in[0].as<T>() + p * size;
      if constexpr (Kind == PoolKind::Max) {
        out[0].as<T>()[p] = size ? *std::max_element(xp, xp + size) : T(0);
      } else {
        double sum = 0;
        for (int64_t i = 0; i < size; ++i) sum += static_cast<double>(xp[i]);
        out[0].as<T>()[p] = static_cast<T>(size ? sum / static_cast<double>(size) : 0.0);
      }
    }
  });
}

}  // namespace

void register_pool(KernelRegistry& r) {
  r.add("MaxPool", pool_kernel<PoolKind::Max>);
  r.add("AveragePool", pool_kernel<PoolKind::Average>);
  r.add("GlobalMaxPool", global_pool_kernel<PoolKind::Max>);
  r.add("GlobalAveragePool", global_pool_kernel<PoolKind::Average>);
}

}  // namespace tessera::ref
