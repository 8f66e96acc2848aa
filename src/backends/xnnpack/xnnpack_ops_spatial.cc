// XnnpackProgram: the NHWC spatial operators, MaxPool/AveragePool/GlobalAveragePool, Resize
// (bilinear), Pad (constant) and DepthToSpace (DCR) (see xnnpack_compiler.h).
#include <algorithm>
#include <cmath>

#include "backends/xnnpack/xnnpack_program.h"
#include "backends/kernel.h"

namespace tessera::xnnpack {

void XnnpackProgram::build_pool(const Node& node) {
  const bool is_max = node.op == "MaxPool";
  const Shape xs = shape(node.inputs[0]), ys = shape(node.outputs[0]);
  if (xs.size() != 4) unsupported(node, "only 2-D pooling (NCHW input)");
  const auto k = attr_ints(node.attrs, "kernel_shape", {});
  if (k.size() != 2) unsupported(node, "kernel_shape must have 2 entries");
  const auto st = attr_ints(node.attrs, "strides", {1, 1}), pads = attr_ints(node.attrs, "pads", {0, 0, 0, 0});
  const auto dil = is_max ? attr_ints(node.attrs, "dilations", {1, 1}) : std::vector<int64_t>{1, 1};
  const std::string auto_pad = attr_string(node.attrs, "auto_pad", "NOTSET");
  if (is_max && attr_int(node.attrs, "storage_order", 0) != 0) unsupported(node, "storage_order = 1");
  if (k[0] * k[1] < 2) unsupported(node, "a 1x1 window (XNNPACK wants at least 2 elements)");
  int64_t pb[2], pe[2];
  for (size_t i = 0; i < 2; ++i) {
    const int64_t in = xs[2 + i], out = ys[2 + i], ek = (k[i] - 1) * dil[i] + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * st[i] + ek - in);
    if (auto_pad == "SAME_UPPER") pb[i] = total / 2;
    else if (auto_pad == "SAME_LOWER") pb[i] = total - total / 2;
    else if (auto_pad == "VALID") pb[i] = 0;
    else pb[i] = pads.size() == 4 ? pads[i] : 0;
    // The far side from the inferred output size (covers ceil_mode); XNNPACK then gives `out` too.
    pe[i] = std::max<int64_t>(0, (out - 1) * st[i] + ek - in - pb[i]);
    if ((in + pb[i] + pe[i] - ek) / st[i] + 1 != out) unsupported(node, "output size XNNPACK's padding cannot give");
  }
  const bool padded = pb[0] || pb[1] || pe[0] || pe[1];
  if (!is_max && padded && attr_int(node.attrs, "count_include_pad", 0) != 0)
    unsupported(node, "count_include_pad = 1 with padding (XNNPACK averages over the valid elements only)");
  const size_t in = read(node, node.inputs[0]);
  const Clamp clamp = fuse_clamps(node.outputs[0]);
  const size_t out = write(node, clamp.out);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    if (is_max)
      return xnn_define_max_pooling_2d(sg, uint32_t(pb[0]), uint32_t(pe[1]), uint32_t(pe[0]), uint32_t(pb[1]), uint32_t(k[0]),
                                       uint32_t(k[1]), uint32_t(st[0]), uint32_t(st[1]), uint32_t(dil[0]), uint32_t(dil[1]),
                                       clamp.lo, clamp.hi, ids[in], ids[out], 0);
    return xnn_define_average_pooling_2d(sg, uint32_t(pb[0]), uint32_t(pe[1]), uint32_t(pe[0]), uint32_t(pb[1]),
                                         uint32_t(k[0]), uint32_t(k[1]), uint32_t(st[0]), uint32_t(st[1]), clamp.lo,
                                         clamp.hi, ids[in], ids[out], 0);
  });
}

void XnnpackProgram::build_global_pool(const Node& node) {
  if (shape(node.inputs[0]).size() != 4) unsupported(node, "only NCHW input");
  const size_t in = read(node, node.inputs[0]);
  const Clamp clamp = fuse_clamps(node.outputs[0]);
  const size_t out = write(node, clamp.out);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    return xnn_define_global_average_pooling_2d(sg, clamp.lo, clamp.hi, ids[in], ids[out], 0);
  });
}

// Resize, mode linear, over H and W only: XNNPACK's bilinear resize. Its coordinate mapping is
// half_pixel by default (clamped at 0, as ONNX), align_corners or asymmetric (its TensorFlow
// legacy mode) by flag; the scale is in/out, so given `scales` must produce the output exactly.
void XnnpackProgram::build_resize(const Node& node) {
  const Shape xs = shape(node.inputs[0]), ys = shape(node.outputs[0]);
  if (xs.size() != 4) unsupported(node, "only NCHW input");
  if (xs[0] != ys[0] || xs[1] != ys[1]) unsupported(node, "resizes N or C");
  const std::string mode = attr_string(node.attrs, "mode", "nearest");
  if (mode != "linear") unsupported(node, "mode '" + mode + "' (this XNNPACK has bilinear resize only)");
  if (attr_int(node.attrs, "antialias", 0) != 0) unsupported(node, "antialias");
  if (!attr_ints(node.attrs, "axes", {}).empty()) unsupported(node, "axes");
  // Resize-10 has no coordinate_transformation_mode (it maps asymmetrically) and takes scales first.
  const bool resize10 = fn_.opset < 11;
  const std::string ctm = attr_string(node.attrs, "coordinate_transformation_mode", resize10 ? "asymmetric" : "half_pixel");
  uint32_t flags = 0;
  if (ctm == "align_corners") flags = XNN_FLAG_ALIGN_CORNERS;
  else if (ctm == "asymmetric") flags = XNN_FLAG_TENSORFLOW_LEGACY_MODE;
  else if (ctm == "pytorch_half_pixel" && ys[2] > 1 && ys[3] > 1) flags = 0;
  else if (ctm != "half_pixel") unsupported(node, "coordinate_transformation_mode '" + ctm + "'");
  const size_t at = resize10 ? 1 : 2;
  if (node.inputs.size() > at && node.inputs[at] != kNoValue && fn_.value(node.inputs[at]).type.numel() > 0) {
    const auto scales = constant_values(node.inputs[at]);
    if (!scales || scales->size() != 4) unsupported(node, "scales must be a constant of 4 elements");
    for (size_t i = 2; i < 4; ++i)
      if (static_cast<double>(static_cast<float>(xs[i]) * static_cast<float>((*scales)[i])) != static_cast<double>(ys[i]))
        unsupported(node, "scales that do not give the output size exactly (XNNPACK scales by in/out)");
  }
  if (ys[2] > xs[2] * 16 || ys[3] > xs[3] * 16 || xs[2] > ys[2] * 16 || xs[3] > ys[3] * 16)
    unsupported(node, "a scale beyond 16x");
  const size_t in = read(node, node.inputs[0]);
  const size_t out = write(node, node.outputs[0]);
  const size_t H = static_cast<size_t>(ys[2]), W = static_cast<size_t>(ys[3]);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    return xnn_define_static_resize_bilinear_2d(sg, H, W, ids[in], ids[out], flags);
  });
}

void XnnpackProgram::build_pad(const Node& node) {
  const Shape xs = shape(node.inputs[0]);
  const std::string mode = attr_string(node.attrs, "mode", "constant");
  if (mode != "constant") unsupported(node, "mode '" + mode + "'");
  std::vector<double> pads;
  if (node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
    auto p = constant_values(node.inputs[1]);
    if (!p) unsupported(node, "pads must be a constant");
    pads = *p;
  } else {
    for (int64_t p : attr_ints(node.attrs, "pads", {})) pads.push_back(static_cast<double>(p));
  }
  if (node.inputs.size() > 3 && node.inputs[3] != kNoValue) unsupported(node, "axes");
  if (pads.size() != 2 * xs.size()) unsupported(node, "pads must have 2 * rank entries");
  float value = static_cast<float>(attr_float(node.attrs, "value", 0.0));
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    auto v = constant_values(node.inputs[2]);
    if (!v || v->size() != 1) unsupported(node, "constant_value must be a scalar constant");
    value = static_cast<float>((*v)[0]);
  }
  const size_t r = xs.size();
  std::vector<size_t> pre(r), post(r);
  for (size_t i = 0; i < r; ++i) {
    if (pads[i] < 0 || pads[r + i] < 0) unsupported(node, "negative pads (cropping)");
    pre[i] = static_cast<size_t>(pads[i]);
    post[i] = static_cast<size_t>(pads[r + i]);
  }
  if (r == 4) {
    pre = {pre[0], pre[2], pre[3], pre[1]};
    post = {post[0], post[2], post[3], post[1]};
  }
  const size_t in = read(node, node.inputs[0]);
  const size_t out = write(node, node.outputs[0]);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    return xnn_define_static_constant_pad(sg, pre.data(), post.data(), value, ids[in], ids[out], 0);
  });
}

// ONNX's DCR DepthToSpace on NCHW is TensorFlow's depth_to_space on NHWC, which XNNPACK has.
void XnnpackProgram::build_depth_to_space(const Node& node) {
  if (shape(node.inputs[0]).size() != 4) unsupported(node, "only NCHW input");
  const std::string mode = attr_string(node.attrs, "mode", "DCR");
  if (mode != "DCR") unsupported(node, "mode '" + mode + "' (XNNPACK's is DCR)");
  const uint32_t block = static_cast<uint32_t>(attr_int(node.attrs, "blocksize", 1));
  const size_t in = read(node, node.inputs[0]);
  const size_t out = write(node, node.outputs[0]);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    return xnn_define_depth_to_space(sg, ids[in], ids[out], block, 0);
  });
}

}  // namespace tessera::xnnpack
