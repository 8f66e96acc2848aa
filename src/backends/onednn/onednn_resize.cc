// Resize (linear) in a oneDNN function: oneDNN's resampling primitive, or a host pass.
//
// oneDNN's linear resampling reads source coordinate (o + 0.5) / F - 0.5 for output coordinate o
// and factor F, clamped to the edge, on each spatial axis: ONNX's Resize with mode linear and
// coordinate_transformation_mode half_pixel, F the Resize's scale (its `scales` input, else
// output size / input size); pytorch_half_pixel is the same where every output size is above 1.
// It reads and writes the source's layout (channel blocks, nhwc), which suits an upsampling
// whose result stays in the function (an FPN's top-down path, then an Add in blocks).
//
// A result that leaves the function plain goes the other way: a segmentation head's last
// upsampling (lraspp_mobilenet_v3_large's 21 x 28 x 28 -> 21 x 224 x 224) ran 0.22 ms in blocks
// (21 channels padded to 32) and 0.52 ms more in the reorder to plain after it, and 1.1 ms plain
// to plain. There, and wherever the source is plain, a host pass resizes the plain NCHW planes
// straight into the output (onednn_host_resize.h), with ref's taps: every coordinate mode of
// linear Resize, not only half_pixel.
//
// Not here: nearest (oneDNN rounds (o + 0.5) / F - 0.5 half up, ONNX's default half down),
// cubic, tf_crop_and_resize, antialias, resizing N or C: KernelUnsupported, left to the backends
// that have them (ref, halide, xnnpack).
#include "backends/onednn/onednn_host_resize.h"
#include "backends/onednn/onednn_program.h"
#include "backends/ref/resize_axis.h"

namespace tessera::onednn {

void OnednnProgram::build_resize(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs.at(0), y = node.outputs.at(0);
  const Shape &xs = fn_.value(x).type.shape, &ys = fn_.value(y).type.shape;
  if (xs.size() < 3 || xs.size() > 5 || ys.size() != xs.size()) unsupported(node, "1-D to 3-D images only");
  if (xs[0] != ys[0] || xs[1] != ys[1]) unsupported(node, "resizes N or C");
  if (attr_string(node.attrs, "mode", "nearest") != "linear") unsupported(node, "mode other than linear");
  if (attr_int(node.attrs, "antialias", 0) != 0 || node.attrs.count("axes")) unsupported(node, "antialias/axes");
  if (node.inputs.size() < 3) unsupported(node, "opset 10's asymmetric coordinates");
  const std::string coord = attr_string(node.attrs, "coordinate_transformation_mode", "half_pixel");
  if (coord == "tf_crop_and_resize") unsupported(node, "tf_crop_and_resize");
  std::vector<float> factors;   // per spatial axis; the same in double for ref's taps
  std::vector<double> scale;
  const ValueId scales = node.inputs[2];
  if (scales != kNoValue && fn_.value(scales).type.numel() > 0) {
    const Value& sv = fn_.value(scales);
    if (!sv.is_constant() || sv.type.dtype != DType::f32) unsupported(node, "scales not a constant f32 tensor");
    const auto* s = static_cast<const float*>(frame_.cview(scales).data);
    if (static_cast<size_t>(sv.type.numel()) != xs.size() || s[0] != 1.0f || s[1] != 1.0f) unsupported(node, "scales for N or C");
    factors.assign(s + 2, s + xs.size());
    scale.assign(s + 2, s + xs.size());
  } else {
    for (size_t d = 2; d < xs.size(); ++d) {
      scale.push_back(static_cast<double>(ys[d]) / static_cast<double>(xs[d]));
      factors.push_back(static_cast<float>(scale.back()));
    }
  }
  const Dims yd(ys.begin(), ys.end());
  const bool plain_out = frame_.is_function_output(y) && plain_boundary(y);
  const memory::desc own = value_mem(x).get_desc();
  if (xs.size() == 4 && (plain_out || own == plain_md(Dims(xs.begin(), xs.end())))) {
    LinearTaps taps[2];
    for (size_t d = 2; d < 4; ++d) {
      const ref::ResizeAxisMap m = ref::resize_axis_map(node, true, coord, scale[d - 2], xs[d], ys[d], 0.0, 1.0);
      LinearTaps& t = taps[d - 2];
      for (const std::vector<ref::ResizeTap>& tap : m.taps) {
        t.i0.push_back(tap.at(0).index);
        t.w0.push_back(static_cast<float>(tap.at(0).weight));
        t.i1.push_back(tap.size() > 1 ? tap[1].index : tap[0].index);
        t.w1.push_back(tap.size() > 1 ? static_cast<float>(tap[1].weight) : 0.0f);
      }
    }
    const memory src = plain_mem(x), dst = dst_mem(y, plain_md(yd));
    const int64_t planes = xs[0] * xs[1], ih = xs[2], iw = xs[3];
    steps_.push_back({{}, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, [src, dst, planes, ih, iw, rows = taps[0], cols = taps[1]] {
      resize_linear_planes(static_cast<const float*>(src.get_data_handle()), static_cast<float*>(dst.get_data_handle()), planes, ih, iw, rows, cols);
    }, "host:resize_linear"});
    return;
  }
  bool half_pixel = coord == "half_pixel";
  if (coord == "pytorch_half_pixel") {
    half_pixel = true;
    for (size_t d = 2; d < ys.size(); ++d) half_pixel = half_pixel && ys[d] > 1;
  }
  if (!half_pixel) unsupported(node, "coordinates " + coord + " outside a plain 2-D image (oneDNN has half_pixel)");
  // In the source's own layout (oneDNN's choice for the dst: channel blocks stay blocks). Plain
  // to plain runs 4x slower here (lraspp's 21 x 28 x 28 -> 224 x 224 head: 1.1 ms against 0.26
  // in blocks, and the reorder to plain after it), and blocks to plain declines.
  try {
    const memory src = value_mem(x);
    dnnl::resampling_forward::primitive_desc pd(dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference,
                                                                               dnnl::algorithm::resampling_linear, factors, src.get_desc(),
                                                                               memory::desc(yd, memory::data_type::f32, memory::format_tag::any)),
                                                engine_);
    const memory dst = dst_mem(y, pd.dst_desc());
    steps_.push_back({dnnl::resampling_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, {}});
    return;
  } catch (const dnnl::error&) {
  }
  unsupported(node, "oneDNN has no resampling for it");
}

}  // namespace tessera::onednn
