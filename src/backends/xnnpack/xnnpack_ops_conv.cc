// XnnpackProgram: the GEMM-like operators, Conv (dense, grouped, depthwise), ConvTranspose and
// Gemm/MatMul as fully connected, each with the Relu/Clip chain after it fused as its output
// clamp (see xnnpack_compiler.h).
#include <algorithm>

#include "backends/xnnpack/xnnpack_program.h"
#include "backends/xnnpack/xnnpack_weights.h"
#include "backends/kernel.h"

namespace tessera::xnnpack {
namespace {

// Explicit padding of one spatial axis, from the attributes and the inferred output size.
struct AxisPads {
  int64_t begin = 0, end = 0;
};

struct ConvGeometry {
  int64_t kh, kw, sh, sw, dh, dw;
  AxisPads ph, pw;
};

// ONNX pads (or auto_pad) of a convolution or pooling window, the far side taken from the
// inferred output size so that ceil_mode and SAME_* need no cases of their own.
ConvGeometry geometry(const Node& node, const Shape& xs, const Shape& ys, int64_t kh, int64_t kw, bool dilated) {
  const auto strides = attr_ints(node.attrs, "strides", {1, 1});
  const auto dil = dilated ? attr_ints(node.attrs, "dilations", {1, 1}) : std::vector<int64_t>{1, 1};
  const auto pads = attr_ints(node.attrs, "pads", {0, 0, 0, 0});
  const std::string auto_pad = attr_string(node.attrs, "auto_pad", "NOTSET");
  ConvGeometry g{kh, kw, strides.size() > 0 ? strides[0] : 1, strides.size() > 1 ? strides[1] : 1,
                 dil.size() > 0 ? dil[0] : 1, dil.size() > 1 ? dil[1] : 1, {}, {}};
  const int64_t k[2] = {kh, kw}, s[2] = {g.sh, g.sw}, d[2] = {g.dh, g.dw};
  AxisPads* out[2] = {&g.ph, &g.pw};
  for (int i = 0; i < 2; ++i) {
    const int64_t in = xs[2 + static_cast<size_t>(i)], o = ys[2 + static_cast<size_t>(i)], ek = (k[i] - 1) * d[i] + 1;
    const int64_t total = std::max<int64_t>(0, (o - 1) * s[i] + ek - in);
    int64_t begin = pads.size() == 4 ? pads[static_cast<size_t>(i)] : 0;
    if (auto_pad == "SAME_UPPER") begin = total / 2;
    else if (auto_pad == "SAME_LOWER") begin = total - total / 2;
    else if (auto_pad == "VALID") begin = 0;
    out[i]->begin = begin;
    // Trailing rows no window reaches (a 1x1 stride-2 conv on an even size) need no padding.
    out[i]->end = std::max<int64_t>(0, (o - 1) * s[i] + ek - in - begin);
    if (begin < 0 || (in + begin + out[i]->end - ek) / s[i] + 1 != o) out[i]->end = -1;   // not expressible
  }
  return g;
}

}  // namespace

XnnpackProgram::ConvOperands XnnpackProgram::conv_operands(const Node& node, const std::string& what) const {
  ConvOperands op;
  op.x = node.inputs[0];
  op.w = node.inputs[1];
  op.b = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  op.xs = shape(op.x), op.ws = shape(op.w), op.ys = shape(node.outputs[0]);
  if (op.xs.size() != 4) unsupported(node, "only 2-D " + what + " (NCHW input)");
  op.g = attr_int(node.attrs, "group", 1), op.C = op.xs[1], op.O = op.ys[1], op.KH = op.ws[2], op.KW = op.ws[3];
  return op;
}

void XnnpackProgram::build_conv(const Node& node) {
  const ConvOperands op = conv_operands(node, "convolutions");
  const int64_t g = op.g, C = op.C, O = op.O, KH = op.KH, KW = op.KW;
  const ConvGeometry geo = geometry(node, op.xs, op.ys, KH, KW, true);
  if (geo.ph.end < 0 || geo.pw.end < 0) unsupported(node, "an output size XNNPACK's padding cannot give");
  const size_t in = read(node, op.x);
  const bool depthwise = g > 1 && g == C && op.ws[1] == 1;
  const size_t Og = static_cast<size_t>(O / g), Cg = static_cast<size_t>(C / g);
  const size_t elems = static_cast<size_t>(O * (C / g) * KH * KW);
  const size_t kh = static_cast<size_t>(KH), kw = static_cast<size_t>(KW), o = static_cast<size_t>(O);
  size_t filter;
  if (depthwise)
    filter = weight(node, op.w, {1, kh, kw, o}, elems,
                    [o, kh, kw](const float* s, float* d) { depthwise_filter(s, d, o, kh, kw); });
  else
    filter = weight(node, op.w, {o, kh, kw, Cg}, elems,
                    [o, Cg, kh, kw](const float* s, float* d) { conv_filter(s, d, o, Cg, kh, kw); });
  const size_t bias = op.b == kNoValue
                          ? SIZE_MAX
                          : weight(node, op.b, {o}, o, [o](const float* s, float* d) { scaled_copy(s, d, o, 1.0f); });
  const Clamp clamp = fuse_clamps(node.outputs[0]);
  const size_t out = write(node, clamp.out);
  const uint32_t flags = 0;
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    const uint32_t bias_id = bias == SIZE_MAX ? XNN_INVALID_VALUE_ID : ids[bias];
    if (depthwise)
      return xnn_define_depthwise_convolution_2d(
          sg, uint32_t(geo.ph.begin), uint32_t(geo.pw.end), uint32_t(geo.ph.end), uint32_t(geo.pw.begin), uint32_t(geo.kh),
          uint32_t(geo.kw), uint32_t(geo.sh), uint32_t(geo.sw), uint32_t(geo.dh), uint32_t(geo.dw), uint32_t(Og), size_t(C),
          clamp.lo, clamp.hi, ids[in], ids[filter], bias_id, ids[out], flags);
    return xnn_define_convolution_2d(sg, uint32_t(geo.ph.begin), uint32_t(geo.pw.end), uint32_t(geo.ph.end),
                                     uint32_t(geo.pw.begin), uint32_t(geo.kh), uint32_t(geo.kw), uint32_t(geo.sh),
                                     uint32_t(geo.sw), uint32_t(geo.dh), uint32_t(geo.dw), uint32_t(g), Cg, Og, clamp.lo,
                                     clamp.hi, ids[in], ids[filter], bias_id, ids[out], flags);
  });
}

void XnnpackProgram::build_conv_transpose(const Node& node) {
  const ConvOperands op = conv_operands(node, "transposed convolutions");
  const int64_t g = op.g, C = op.C, O = op.O, KH = op.KH, KW = op.KW;
  const auto strides = attr_ints(node.attrs, "strides", {1, 1}), dil = attr_ints(node.attrs, "dilations", {1, 1});
  const auto pads = attr_ints(node.attrs, "pads", {0, 0, 0, 0});
  const std::string auto_pad = attr_string(node.attrs, "auto_pad", "NOTSET");
  // out = stride * (in - 1) + adjustment + (k - 1) * dilation + 1 - pad_begin - pad_end
  int64_t pb[2], pe[2], adj[2];
  const int64_t k[2] = {KH, KW};
  for (size_t i = 0; i < 2; ++i) {
    const int64_t full = strides[i] * (op.xs[2 + i] - 1) + (k[i] - 1) * dil[i] + 1, total = full - op.ys[2 + i];
    if (auto_pad == "SAME_UPPER") pb[i] = total / 2;
    else if (auto_pad == "SAME_LOWER") pb[i] = total - total / 2;
    else if (auto_pad == "VALID") pb[i] = 0;
    else pb[i] = pads.size() == 4 ? pads[i] : 0;
    pe[i] = total - pb[i];
    adj[i] = 0;
    if (pe[i] < 0) {   // output_padding: rows/columns added at the far end
      adj[i] = -pe[i];
      pe[i] = 0;
    }
    if (pb[i] < 0 || adj[i] >= strides[i]) unsupported(node, "padding/output_padding XNNPACK cannot express");
  }
  const size_t in = read(node, op.x);
  const size_t Cg = static_cast<size_t>(C / g), Og = static_cast<size_t>(O / g), kh = size_t(KH), kw = size_t(KW);
  const size_t groups = static_cast<size_t>(g);
  const size_t filter = weight(node, op.w, {groups * Og, kh, kw, Cg}, groups * Og * Cg * kh * kw,
                               [=](const float* s, float* d) { deconv_filter(s, d, groups, Cg, Og, kh, kw); });
  const size_t o = static_cast<size_t>(O);
  const size_t bias = op.b == kNoValue
                          ? SIZE_MAX
                          : weight(node, op.b, {o}, o, [o](const float* s, float* d) { scaled_copy(s, d, o, 1.0f); });
  const Clamp clamp = fuse_clamps(node.outputs[0]);
  const size_t out = write(node, clamp.out);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    return xnn_define_deconvolution_2d(sg, uint32_t(pb[0]), uint32_t(pe[1]), uint32_t(pe[0]), uint32_t(pb[1]),
                                       uint32_t(adj[0]), uint32_t(adj[1]), uint32_t(KH), uint32_t(KW),
                                       uint32_t(strides[0]), uint32_t(strides[1]), uint32_t(dil[0]), uint32_t(dil[1]),
                                       uint32_t(g), Cg, Og, clamp.lo, clamp.hi, ids[in], ids[filter],
                                       bias == SIZE_MAX ? XNN_INVALID_VALUE_ID : ids[bias], ids[out], 0);
  });
}

// Y[..., N] = A[..., K] x W[K, N] (+ bias[N]): XNNPACK's fully connected with W static.
void XnnpackProgram::build_fully_connected(const Node& node) {
  const ValueId a = node.inputs[0], w = node.inputs[1];
  const Shape as = shape(a), ws = shape(w), ys = shape(node.outputs[0]);
  if (ws.size() != 2) unsupported(node, "weights must be a 2-D constant or weight input");
  if (as.size() < 2 || as.size() == 4) unsupported(node, "input of rank " + std::to_string(as.size()) + " (2, 3, 5, 6 only)");
  bool transposed = false;
  float alpha = 1.0f, beta = 1.0f;
  ValueId c = kNoValue;
  if (node.op == "Gemm") {
    if (attr_int(node.attrs, "transA", 0) != 0) unsupported(node, "transA = 1");
    transposed = attr_int(node.attrs, "transB", 0) != 0;
    alpha = static_cast<float>(attr_float(node.attrs, "alpha", 1.0));
    beta = static_cast<float>(attr_float(node.attrs, "beta", 1.0));
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && beta != 0.0f) c = node.inputs[2];
  }
  const size_t K = static_cast<size_t>(transposed ? ws[1] : ws[0]), N = static_cast<size_t>(transposed ? ws[0] : ws[1]);
  if (c != kNoValue && static_cast<size_t>(fn_.value(c).type.numel()) != N)
    unsupported(node, "bias C must have N elements (a row broadcast), not " + to_string(fn_.value(c).type));
  const size_t in = read(node, a);
  const size_t filter = weight(node, w, {N, K}, N * K,
                               [=](const float* s, float* d) { fc_filter(s, d, K, N, transposed, alpha); });
  const size_t bias = c == kNoValue ? SIZE_MAX
                                    : weight(node, c, {N}, N, [=](const float* s, float* d) { scaled_copy(s, d, N, beta); });
  const Clamp clamp = fuse_clamps(node.outputs[0]);
  const size_t out = write(node, clamp.out);
  (void)ys;
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    return xnn_define_fully_connected(sg, clamp.lo, clamp.hi, ids[in], ids[filter],
                                      bias == SIZE_MAX ? XNN_INVALID_VALUE_ID : ids[bias], ids[out], 0);
  });
}

}  // namespace tessera::xnnpack
