// Normalizations: BatchNormalization (inference form), LayerNormalization (with its optional Mean
// and InvStdDev outputs), InstanceNormalization, MeanVarianceNormalization.
//
// Statistics are accumulated in double whatever the element type (LayerNormalization's
// stash_type asks for at least f32), then applied in the element type. BatchNormalization in
// training mode (training_mode = 1: batch statistics and running-mean outputs) is not a
// deployment op and is unsupported. Shapes: X is [N, C, ...] for Batch/Instance; LayerNorm
// normalizes over the dimensions [axis, rank) with Scale/B broadcast to them.
#include <cmath>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

// Mean and 1/sqrt(var + eps) of `count` elements spaced `stride` apart.
template <typename T>
std::pair<double, double> moments(const T* x, int64_t count, int64_t stride, double eps) {
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < count; ++i) sum += static_cast<double>(x[i * stride]);
  const double mean = count ? sum / static_cast<double>(count) : 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(x[i * stride]) - mean;
    sq += d * d;
  }
  const double var = count ? sq / static_cast<double>(count) : 0.0;
  return {mean, 1.0 / std::sqrt(var + eps)};
}

void check_per_channel(const Node& n, Inputs in, size_t first, int64_t channels) {
  for (size_t i = first; i < in.size(); ++i)
    if (in[i].numel() != channels) bad_node(n, "input " + std::to_string(i) + " must have one value per channel");
}

void batch_norm_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 5, 5);
  expect_outputs(n, out, 1, 3);
  if (attr_int(n.attrs, "training_mode", 0) != 0) unsupported(n, "training_mode = 1");
  const Shape& xs = in[0].type.shape;
  if (xs.size() < 2) bad_node(n, "X must be [N, C, ...]");
  expect_shape(n, out[0], xs);
  check_per_channel(n, in, 1, xs[1]);
  const double eps = attr_float(n.attrs, "epsilon", 1e-5);
  const int64_t channels = xs[1], inner = in[0].numel() / std::max<int64_t>(xs[0] * channels, 1);
  visit_float(n, in[0].type.dtype, [&]<typename T>() {
    const T *x = in[0].as<T>(), *scale = in[1].as<T>(), *bias = in[2].as<T>();
    const T *mean = in[3].as<T>(), *var = in[4].as<T>();
    T* y = out[0].as<T>();
    for (int64_t b = 0; b < xs[0]; ++b)
      for (int64_t c = 0; c < channels; ++c) {
        const double k = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
        const double shift = static_cast<double>(bias[c]) - static_cast<double>(mean[c]) * k;
        const int64_t base = (b * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) y[base + i] = static_cast<T>(static_cast<double>(x[base + i]) * k + shift);
      }
  });
}

void instance_norm_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 3, 3);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  if (xs.size() < 3) bad_node(n, "X must be [N, C, D...]");
  expect_shape(n, out[0], xs);
  check_per_channel(n, in, 1, xs[1]);
  const double eps = attr_float(n.attrs, "epsilon", 1e-5);
  const int64_t channels = xs[1], inner = in[0].numel() / std::max<int64_t>(xs[0] * channels, 1);
  visit_float(n, in[0].type.dtype, [&]<typename T>() {
    for (int64_t p = 0; p < xs[0] * channels; ++p) {
      const T* x = in[0].as<T>() + p * inner;
      T* y = out[0].as<T>() + p * inner;
      const auto [mean, inv] = moments(x, inner, 1, eps);
      const double scale = static_cast<double>(in[1].as<T>()[p % channels]);
      const double bias = static_cast<double>(in[2].as<T>()[p % channels]);
      for (int64_t i = 0; i < inner; ++i) y[i] = static_cast<T>((static_cast<double>(x[i]) - mean) * inv * scale + bias);
    }
  });
}

void layer_norm_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 3);
  expect_outputs(n, out, 1, 3);
  const Shape& xs = in[0].type.shape;
  const int rank = static_cast<int>(xs.size());
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", -1), rank));
  const double eps = attr_float(n.attrs, "epsilon", 1e-5);
  expect_shape(n, out[0], xs);
  const Shape inner_shape(xs.begin() + static_cast<std::ptrdiff_t>(axis), xs.end());
  Shape stat_shape = xs;
  for (size_t d = axis; d < xs.size(); ++d) stat_shape[d] = 1;
  for (size_t o = 1; o < 3; ++o)
    if (has_output(out, o)) expect_shape(n, out[o], stat_shape);
  const int64_t inner = product_of(inner_shape), outer = inner ? in[0].numel() / inner : 0;
  const auto scale_strides = broadcast_strides(in[1].type.shape, inner_shape);
  const bool has_bias = has_input(in, 2);
  const auto bias_strides = has_bias ? broadcast_strides(in[2].type.shape, inner_shape) : scale_strides;
  visit_float(n, in[0].type.dtype, [&]<typename T>() {
    // Offsets of Scale and B for each normalized element (they broadcast to inner_shape).
    std::vector<int64_t> s_off(static_cast<size_t>(inner)), b_off(static_cast<size_t>(inner));
    const std::vector<int64_t> strides[] = {scale_strides, bias_strides};
    for_each_broadcast(inner_shape, strides, [&](int64_t i, const int64_t* o) {
      s_off[static_cast<size_t>(i)] = o[0];
      b_off[static_cast<size_t>(i)] = o[1];
    });
    for (int64_t r = 0; r < outer; ++r) {
      const T* x = in[0].as<T>() + r * inner;
      T* y = out[0].as<T>() + r * inner;
      const auto [mean, inv] = moments(x, inner, 1, eps);
      for (int64_t i = 0; i < inner; ++i) {
        double v = (static_cast<double>(x[i]) - mean) * inv * static_cast<double>(in[1].as<T>()[s_off[static_cast<size_t>(i)]]);
        if (has_bias) v += static_cast<double>(in[2].as<T>()[b_off[static_cast<size_t>(i)]]);
        y[i] = static_cast<T>(v);
      }
      // Mean and InvStdDev have the stash type (f32 by default); write them as the view's dtype.
      if (has_output(out, 1)) store_from_double(out[1].type.dtype, out[1].data, r, mean);
      if (has_output(out, 2)) store_from_double(out[2].type.dtype, out[2].data, r, inv);
    }
  });
}

// MeanVarianceNormalization: (x - mean) / sqrt(var) over `axes` (default N, H, W), eps 1e-9.
void mvn_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const int rank = static_cast<int>(xs.size());
  expect_shape(n, out[0], xs);
  Shape stat = xs;
  for (int64_t a : attr_ints(n.attrs, "axes", {0, 2, 3})) stat[static_cast<size_t>(normalize_axis(n, a, rank))] = 1;
  const int64_t groups = product_of(stat), count = groups ? in[0].numel() / groups : 0;
  const std::vector<int64_t> strides[] = {broadcast_strides(stat, xs)};
  visit_float(n, in[0].type.dtype, [&]<typename T>() {
    const T* x = in[0].as<T>();
    std::vector<double> sum(static_cast<size_t>(groups)), sq(static_cast<size_t>(groups));
    for_each_broadcast(xs, strides, [&](int64_t i, const int64_t* o) {
      sum[static_cast<size_t>(o[0])] += static_cast<double>(x[i]);
      sq[static_cast<size_t>(o[0])] += static_cast<double>(x[i]) * static_cast<double>(x[i]);
    });
    for_each_broadcast(xs, strides, [&](int64_t i, const int64_t* o) {
      const double mean = sum[static_cast<size_t>(o[0])] / static_cast<double>(count);
      const double var = sq[static_cast<size_t>(o[0])] / static_cast<double>(count) - mean * mean;
      out[0].as<T>()[i] = static_cast<T>((static_cast<double>(x[i]) - mean) / (std::sqrt(var) + 1e-9));
    });
  });
}

}  // namespace

void register_norm(KernelRegistry& r) {
  r.add("BatchNormalization", batch_norm_kernel);
  r.add("InstanceNormalization", instance_norm_kernel);
  r.add("LayerNormalization", layer_norm_kernel);
  r.add("MeanVarianceNormalization", mvn_kernel);
}

}  // namespace tessera::ref
