// Resize: nearest and (multi)linear interpolation with every coordinate transformation mode of
// opset 11-17 (half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nearest,
// tf_crop_and_resize with its roi and extrapolation_value).
//
// Interpolation is separable: each output coordinate maps to an input coordinate x per dimension
// (the transformation mode), then to taps with weights (nearest: one tap by nearest_mode; linear:
// floor(x) and floor(x)+1 with weights 1-r and r, indices clamped to the edge, as ONNX's reference
// pads with edge values). An output element is the weighted sum over the product of its
// dimensions' taps. The scale of a dimension is the `scales` input when given, else out/in: ONNX
// transforms coordinates with that scale, not with the rounded output extent. Cubic mode and
// opset 18's antialias/axes are unsupported.
#include <algorithm>
#include <cmath>
#include <iterator>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/resize_axis.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

double source_coordinate(const std::string& mode, double x, double scale, int64_t in, int64_t out, double roi_lo,
                         double roi_hi, bool& extrapolate) {
  extrapolate = false;
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") {
    const double length = scale * static_cast<double>(in);
    return length == 1 ? 0.0 : x * static_cast<double>(in - 1) / (length - 1);
  }
  if (mode == "asymmetric") return x / scale;
  // ONNX's own test data spells it tf_half_pixel_for_nn.
  if (mode == "tf_half_pixel_for_nearest" || mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize (resize_kernel rejects every other mode)
  const double span = static_cast<double>(in - 1);
  const double length = scale * static_cast<double>(in);
  double src = length > 1 ? roi_lo * span + x * (roi_hi - roi_lo) * span / (length - 1) : (roi_hi - roi_lo) * span / 2 + roi_lo * span;
  extrapolate = src < 0 || src > span;
  return src;
}

int64_t nearest(const std::string& mode, double x) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  const double fl = std::floor(x);
  if (x - fl == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? fl + 1 : fl);
  return static_cast<int64_t>(std::round(x));
}

}  // namespace

ResizeAxisMap resize_axis_map(const Node& n, bool linear, const std::string& coord_mode, double scale, int64_t in,
                              int64_t out, double roi_lo, double roi_hi) {
  const std::string nearest_mode = attr_string(n.attrs, "nearest_mode", "round_prefer_floor");
  if (nearest_mode != "round_prefer_floor" && nearest_mode != "round_prefer_ceil" && nearest_mode != "floor" &&
      nearest_mode != "ceil")
    unsupported(n, "nearest_mode " + nearest_mode);
  ResizeAxisMap m;
  auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    bool extrapolate = false;
    const double x = source_coordinate(coord_mode, static_cast<double>(o), scale, in, out, roi_lo, roi_hi, extrapolate);
    std::vector<ResizeTap> taps;
    if (!extrapolate) {
      if (!linear) {
        taps.push_back({clamp(nearest(nearest_mode, x)), 1.0});
      } else {
        const double fl = std::floor(x), r = x - fl;
        taps.push_back({clamp(static_cast<int64_t>(fl)), 1.0 - r});
        if (r != 0) taps.push_back({clamp(static_cast<int64_t>(fl) + 1), r});
      }
    }
    m.taps.push_back(std::move(taps));
  }
  return m;
}

namespace {

void resize_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 4);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const Shape& ys = out[0].type.shape;
  const size_t rank = xs.size();
  if (ys.size() != rank) bad_node(n, "output rank differs from the input's");
  const std::string mode = attr_string(n.attrs, "mode", "nearest");
  if (mode != "nearest" && mode != "linear") unsupported(n, "mode " + mode);
  if (attr_int(n.attrs, "antialias", 0) != 0 || n.attrs.count("axes")) unsupported(n, "antialias/axes (opset 18)");
  const bool opset10 = in.size() == 2;  // Resize-10: (X, scales), asymmetric coordinates
  const size_t scales_at = opset10 ? 1 : 2;
  const std::string coord_mode =
      opset10 ? "asymmetric" : attr_string(n.attrs, "coordinate_transformation_mode", "half_pixel");
  static const char* const kModes[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                      "tf_half_pixel_for_nearest", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(kModes), std::end(kModes), coord_mode) == std::end(kModes))
    unsupported(n, "coordinate_transformation_mode " + coord_mode);
  std::vector<double> scales;
  if (has_input(in, scales_at) && in[scales_at].numel() > 0) {
    if (in[scales_at].numel() != static_cast<int64_t>(rank)) bad_node(n, "scales needs one value per dimension");
    for (int64_t i = 0; i < static_cast<int64_t>(rank); ++i) scales.push_back(load_as_double(in[scales_at].type.dtype, in[scales_at].data, i));
  } else if (has_input(in, 3)) {
    expect_shape(n, out[0], read_ints(n, in[3]));
  } else {
    bad_node(n, "needs scales or sizes");
  }
  std::vector<double> roi(2 * rank, 0.0);
  for (size_t d = 0; d < rank; ++d) roi[d + rank] = 1.0;
  if (coord_mode == "tf_crop_and_resize" && has_input(in, 1) && in[1].numel() == static_cast<int64_t>(2 * rank))
    for (size_t i = 0; i < 2 * rank; ++i) roi[i] = load_as_double(in[1].type.dtype, in[1].data, static_cast<int64_t>(i));
  std::vector<ResizeAxisMap> maps;
  for (size_t d = 0; d < rank; ++d) {
    const double scale = scales.empty() ? static_cast<double>(ys[d]) / static_cast<double>(xs[d]) : scales[d];
    if (!scales.empty() && static_cast<int64_t>(std::floor(static_cast<double>(xs[d]) * scale)) != ys[d])
      bad_node(n, "output extent " + std::to_string(ys[d]) + " disagrees with scale " + std::to_string(scale));
    maps.push_back(resize_axis_map(n, mode == "linear", coord_mode, scale, xs[d], ys[d], roi[d], roi[d + rank]));
  }
  const double extrapolation = attr_float(n.attrs, "extrapolation_value", 0.0);
  const auto st = strides_of(xs);
  visit_float(n, in[0].type.dtype, [&]<typename T>() {
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    std::vector<const std::vector<ResizeTap>*> taps(rank);
    std::vector<size_t> pick(rank);
    for (int64_t i = 0; i < out[0].numel(); ++i) {
      int64_t rest = i;
      bool outside = false;
      for (size_t d = rank; d-- > 0;) {
        taps[d] = &maps[d].taps[static_cast<size_t>(rest % ys[d])];
        rest /= ys[d];
        outside = outside || taps[d]->empty();
      }
      if (outside) {
        y[i] = static_cast<T>(extrapolation);
        continue;
      }
      // Sum over the product of the dimensions' taps (an odometer over `pick`).
      double sum = 0;
      std::fill(pick.begin(), pick.end(), 0);
      while (true) {
        double w = 1;
        int64_t off = 0;
        for (size_t d = 0; d < rank; ++d) {
          const ResizeTap& t = (*taps[d])[pick[d]];
          w *= t.weight;
          off += t.index * st[d];
        }
        sum += w * static_cast<double>(x[off]);
        size_t d = rank;
        while (d-- > 0 && ++pick[d] == taps[d]->size()) pick[d] = 0;
        if (d == static_cast<size_t>(-1)) break;
      }
      y[i] = static_cast<T>(sum);
    }
  });
}

}  // namespace

void register_resize(KernelRegistry& r) { r.add("Resize", resize_kernel); }

}  // namespace tessera::ref
