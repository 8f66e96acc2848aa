// Convolution: Conv and ConvTranspose over any number of spatial dimensions, with groups,
// strides, dilations, explicit or automatic padding, and an optional bias.
//
// Conv gathers: for each output position it builds the input patch (C/group x kernel positions,
// zeros where the window hangs over the padding) and dots it with every filter of the group, an
// im2col without the matrix. ConvTranspose scatters: each input element adds x * w into every
// output position its kernel window reaches. Both accumulate in the element type (f32/f64).
//
//   Conv:          y[n, m, o] = b[m] + sum_{c, k} x[n, g*C_g + c, o*s - pb + k*d] * w[m, c, k]
//   ConvTranspose: y[n, g*M_g + m, i*s - pb + k*d] += x[n, g*C_g + c, i] * w[g*C_g + c, m, k]
#include <algorithm>

#include "backends/ref/linear_core.h"
#include "backends/ref/ref_kernels.h"
#include "backends/ref/window.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

Shape spatial(const Shape& s) { return Shape(s.begin() + 2, s.end()); }

// Coordinates of flat index `i` in a row-major box of extents `ext`.
void unflatten(int64_t i, const std::vector<int64_t>& ext, std::vector<int64_t>& coord) {
  for (size_t d = ext.size(); d-- > 0;) {
    coord[d] = i % ext[d];
    i /= ext[d];
  }
}

void check_conv_shapes(const Node& n, const Shape& x, const Shape& w, const Shape& y, int64_t group,
                       bool transpose) {
  if (x.size() < 3 || w.size() != x.size() || y.size() != x.size())
    bad_node(n, "X, W and Y must have the same rank >= 3");
  const int64_t channels = x[1];
  if (group <= 0 || channels % group != 0) bad_node(n, "group does not divide the channels");
  const int64_t w_channels = transpose ? w[0] : w[1] * group;
  const int64_t out_channels = transpose ? w[1] * group : w[0];
  if (w_channels != channels || y[1] != out_channels || y[0] != x[0] || (!transpose && w[0] % group != 0))
    bad_node(n, "channel counts of X, W, Y disagree");
}

template <typename T>
void conv(const Node& n, Inputs in, const TensorView& out) {
  const Shape& xs = in[0].type.shape;
  const Shape& ws = in[1].type.shape;
  const int64_t group = attr_int(n.attrs, "group", 1);
  check_conv_shapes(n, xs, ws, out.type.shape, group, false);
  const Shape in_sp = spatial(xs), out_sp = spatial(out.type.shape);
  const Window win = forward_window(n, spatial(ws), in_sp, out_sp, false);
  const int k = win.rank();
  const int64_t batch = xs[0], channels = xs[1], filters = ws[0];
  const int64_t cg = channels / group, mg = filters / group;
  const int64_t kpos = product_of(win.kernel), ipos = product_of(in_sp), opos = product_of(out_sp);
  const T* x = in[0].as<T>();
  const T* w = in[1].as<T>();
  const T* bias = has_input(in, 2) ? in[2].as<T>() : nullptr;
  T* y = out.as<T>();

  // Per kernel position, its per-dimension offset k*d.
  std::vector<std::vector<int64_t>> koff(static_cast<size_t>(kpos), std::vector<int64_t>(static_cast<size_t>(k)));
  for (int64_t p = 0; p < kpos; ++p) {
    unflatten(p, win.kernel, koff[static_cast<size_t>(p)]);
    for (int d = 0; d < k; ++d) koff[static_cast<size_t>(p)][static_cast<size_t>(d)] *= win.dilations[static_cast<size_t>(d)];
  }
  std::vector<int64_t> ocoord(static_cast<size_t>(k)), src(static_cast<size_t>(kpos));
  std::vector<T> patch(static_cast<size_t>(cg * kpos));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t g = 0; g < group; ++g) {
      for (int64_t o = 0; o < opos; ++o) {
        unflatten(o, out_sp, ocoord);
        for (int64_t p = 0; p < kpos; ++p) {  // flat input offset of each tap, or -1 in padding
          int64_t idx = 0;
          for (int d = 0; d < k && idx >= 0; ++d) {
            const auto du = static_cast<size_t>(d);
            const int64_t c = ocoord[du] * win.strides[du] - win.pad_begin[du] + koff[static_cast<size_t>(p)][du];
            idx = (c < 0 || c >= in_sp[du]) ? -1 : idx * in_sp[du] + c;
          }
          src[static_cast<size_t>(p)] = idx;
        }
        for (int64_t c = 0; c < cg; ++c) {
          const T* xc = x + ((b * channels) + g * cg + c) * ipos;
          for (int64_t p = 0; p < kpos; ++p) {
            const int64_t s = src[static_cast<size_t>(p)];
            patch[static_cast<size_t>(c * kpos + p)] = s < 0 ? T(0) : xc[s];
          }
        }
        for (int64_t m = 0; m < mg; ++m) {
          const int64_t f = g * mg + m;
          const T* wf = w + f * cg * kpos;
          T acc = bias ? bias[f] : T(0);
          for (int64_t j = 0; j < cg * kpos; ++j) acc += patch[static_cast<size_t>(j)] * wf[j];
          y[(b * filters + f) * opos + o] = acc;
        }
      }
    }
  }
}

// Begin pads of ConvTranspose: explicit pads, or derived from the output extents when auto_pad
// is SAME_* or output_shape is given (ONNX: total = s*(i-1) + output_padding + k_eff - o).
std::vector<int64_t> transpose_pad_begin(const Node& n, const Window& win, const Shape& in_sp, const Shape& out_sp) {
  const size_t k = in_sp.size();
  const std::string auto_pad = attr_string(n.attrs, "auto_pad", "NOTSET");
  const auto out_pad = attr_ints(n.attrs, "output_padding", std::vector<int64_t>(k, 0));
  const bool derive = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || n.attrs.count("output_shape");
  std::vector<int64_t> begin(k, 0);
  const auto pads = attr_ints(n.attrs, "pads", std::vector<int64_t>(2 * k, 0));
  for (size_t d = 0; d < k; ++d) {
    const int64_t full = win.strides[d] * (in_sp[d] - 1) + out_pad[d] + win.effective_kernel(static_cast<int>(d));
    if (derive) {
      const int64_t total = full - out_sp[d];
      // C division: a negative total (output_shape past the full extent) pads only the end.
      begin[d] = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
    } else if (auto_pad == "NOTSET") {
      begin[d] = pads[d];
      if (full - pads[d] - pads[d + k] != out_sp[d]) bad_node(n, "output extent disagrees with pads");
    } else if (auto_pad == "VALID") {
      if (full != out_sp[d]) bad_node(n, "output extent disagrees with VALID padding");
    } else {
      unsupported(n, "auto_pad " + auto_pad);
    }
  }
  return begin;
}

template <typename T>
void conv_transpose(const Node& n, Inputs in, const TensorView& out) {
  const Shape& xs = in[0].type.shape;
  const Shape& ws = in[1].type.shape;
  const int64_t group = attr_int(n.attrs, "group", 1);
  check_conv_shapes(n, xs, ws, out.type.shape, group, true);
  const Shape in_sp = spatial(xs), out_sp = spatial(out.type.shape);
  const size_t k = in_sp.size();
  Window win;
  win.kernel = attr_ints(n.attrs, "kernel_shape", spatial(ws));
  win.strides = attr_ints(n.attrs, "strides", std::vector<int64_t>(k, 1));
  win.dilations = attr_ints(n.attrs, "dilations", std::vector<int64_t>(k, 1));
  if (win.kernel.size() != k || win.strides.size() != k || win.dilations.size() != k)
    bad_node(n, "kernel_shape/strides/dilations do not match the spatial rank");
  const auto pad_begin = transpose_pad_begin(n, win, in_sp, out_sp);
  const int64_t batch = xs[0], channels = xs[1], cg = channels / group, mg = ws[1], filters = mg * group;
  const int64_t kpos = product_of(win.kernel), ipos = product_of(in_sp), opos = product_of(out_sp);
  const T* x = in[0].as<T>();
  const T* w = in[1].as<T>();
  T* y = out.as<T>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < filters; ++f)
      std::fill_n(y + (b * filters + f) * opos, opos, has_input(in, 2) ? in[2].as<T>()[f] : T(0));

  std::vector<int64_t> icoord(k), kcoord(k);
  for (int64_t i = 0; i < ipos; ++i) {
    unflatten(i, in_sp, icoord);
    for (int64_t p = 0; p < kpos; ++p) {
      unflatten(p, win.kernel, kcoord);
      int64_t o = 0;
      for (size_t d = 0; d < k && o >= 0; ++d) {
        const int64_t c = icoord[d] * win.strides[d] - pad_begin[d] + kcoord[d] * win.dilations[d];
        o = (c < 0 || c >= out_sp[d]) ? -1 : o * out_sp[d] + c;
      }
      if (o < 0) continue;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t g = 0; g < group; ++g)
          for (int64_t c = 0; c < cg; ++c) {
            const int64_t ch = g * cg + c;
            const T xv = x[(b * channels + ch) * ipos + i];
            for (int64_t m = 0; m < mg; ++m)
              y[(b * filters + g * mg + m) * opos + o] += xv * w[(ch * mg + m) * kpos + p];
          }
    }
  }
}

void conv_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 3);
  expect_outputs(n, out, 1, 1);
  visit_float(n, in[0].type.dtype, [&]<typename T>() { conv<T>(n, in, out[0]); });
}

void conv_transpose_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 3);
  expect_outputs(n, out, 1, 1);
  visit_float(n, in[0].type.dtype, [&]<typename T>() { conv_transpose<T>(n, in, out[0]); });
}

}  // namespace

void conv_int32(const Node& n, std::span<const ConstTensorView> in, const TensorView& out) { conv<int32_t>(n, in, out); }

void register_conv(KernelRegistry& r) {
  r.add("Conv", conv_kernel);
  r.add("ConvTranspose", conv_transpose_kernel);
}

}  // namespace tessera::ref
