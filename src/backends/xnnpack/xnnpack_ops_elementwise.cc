// XnnpackProgram: elementwise and shape-only operators: clamps (Relu, Clip), the other unary ops
// XNNPACK has, PRelu, broadcast binaries (Add, Sub, Mul, Div, Max, Min; the first four with a
// fused output clamp), Softmax over the channel axis, and Reshape-like ops where NHWC and NCHW
// orders agree (see xnnpack_compiler.h).
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/xnnpack/xnnpack_program.h"
#include "backends/xnnpack/xnnpack_weights.h"
#include "backends/kernel.h"

namespace tessera::xnnpack {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

using UnaryFn = xnn_status (*)(xnn_subgraph_t, uint32_t, uint32_t, uint32_t);

UnaryFn unary_fn(const std::string& op) {
  if (op == "HardSwish") return &xnn_define_hardswish;
  if (op == "Sigmoid") return &xnn_define_sigmoid;
  if (op == "Abs") return &xnn_define_abs;
  if (op == "Neg") return &xnn_define_negate;
  if (op == "Sqrt") return &xnn_define_square_root;
  if (op == "Floor") return &xnn_define_floor;
  if (op == "Ceil") return &xnn_define_ceiling;
  if (op == "Round") return &xnn_define_bankers_rounding;   // ONNX rounds half to even, as this does
  return nullptr;
}

// Clip's bound from input `i` (opset >= 11) or attribute `name` (older); nullopt when the input
// is not a constant scalar with data.
std::optional<float> clip_bound(const Graph& fn, const Node& node, size_t i, const char* name, float dflt) {
  if (fn.opset < 11) return static_cast<float>(attr_float(node.attrs, name, dflt));
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return dflt;
  const Value& v = fn.value(node.inputs[i]);
  if (!v.is_constant() || !v.data || v.type.dtype != DType::f32 || v.type.numel() != 1) return std::nullopt;
  float f;
  std::memcpy(&f, v.data->data(), sizeof f);
  return f;
}

}  // namespace

std::optional<std::pair<float, float>> XnnpackProgram::clamp_bounds(const Graph& fn, const Node& node) {
  if (node.op == "Relu") return std::pair{0.0f, kInf};
  if (node.op != "Clip") return std::nullopt;
  const auto lo = clip_bound(fn, node, 1, "min", -kInf), hi = clip_bound(fn, node, 2, "max", kInf);
  if (!lo || !hi) return std::nullopt;
  return std::pair{*lo, *hi};
}

void XnnpackProgram::build_unary(const Node& node) {
  const std::string& op = node.op;
  if (op == "Relu" || op == "Clip") {
    const auto bounds = clamp_bounds(fn_, node);
    if (!bounds) unsupported(node, "Clip bounds must be f32 constants");
    const size_t in = read(node, node.inputs[0]);
    const Clamp more = fuse_clamps(node.outputs[0]);
    const float lo = std::max(bounds->first, more.lo), hi = std::min(bounds->second, more.hi);
    const size_t out = write(node, more.out);
    add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
      return xnn_define_clamp(sg, lo, hi, ids[in], ids[out], 0);
    });
    return;
  }
  if (op == "LeakyRelu" || op == "Elu") {
    const float alpha = static_cast<float>(attr_float(node.attrs, "alpha", op == "Elu" ? 1.0 : 0.01));
    const size_t in = read(node, node.inputs[0]), out = write(node, node.outputs[0]);
    const bool leaky = op == "LeakyRelu";
    add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
      return leaky ? xnn_define_leaky_relu(sg, alpha, ids[in], ids[out], 0) : xnn_define_elu(sg, alpha, ids[in], ids[out], 0);
    });
    return;
  }
  if (op == "PRelu") {
    // XNNPACK's slope is one value per channel (the last NHWC axis): a slope that varies along
    // any other axis is refused; a single slope is repeated per channel.
    const Shape xs = shape(node.inputs[0]), ss = shape(node.inputs[1]);
    if (xs.size() < 2 || ss.size() > xs.size()) unsupported(node, "input of rank < 2");
    const size_t channel_axis = xs.size() == 4 ? 1 : xs.size() - 1;
    Shape padded(xs.size(), 1);
    std::copy(ss.begin(), ss.end(), padded.end() - static_cast<std::ptrdiff_t>(ss.size()));
    for (size_t i = 0; i < padded.size(); ++i)
      if (padded[i] != 1 && i != channel_axis) unsupported(node, "slope varies along an axis other than the channels");
    const size_t C = static_cast<size_t>(xs[channel_axis]), given = static_cast<size_t>(padded[channel_axis]);
    const size_t in = read(node, node.inputs[0]);
    const size_t slope = weight(node, node.inputs[1], {C}, C, [=](const float* s, float* d) {
      for (size_t c = 0; c < C; ++c) d[c] = s[given == 1 ? 0 : c];
    });
    const size_t out = write(node, node.outputs[0]);
    add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
      return xnn_define_prelu(sg, ids[in], ids[slope], ids[out], 0);
    });
    return;
  }
  const UnaryFn fn = unary_fn(op);
  if (!fn) unsupported(node, "XNNPACK (this snapshot) has no operator for it");
  const size_t in = read(node, node.inputs[0]), out = write(node, node.outputs[0]);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) { return fn(sg, ids[in], ids[out], 0); });
}

void XnnpackProgram::build_binary(const Node& node) {
  if (node.inputs.size() != 2) unsupported(node, "only two operands");
  const Shape ys = shape(node.outputs[0]);
  const View view = ys.size() == 4 ? View::Padded4 : View::Native;   // lower-rank operands of NHWC outputs
  const size_t a = read(node, node.inputs[0], view), b = read(node, node.inputs[1], view);
  const std::string op = node.op;
  const bool clamps = op != "Max" && op != "Min";
  const Clamp clamp = clamps ? fuse_clamps(node.outputs[0]) : Clamp{-kInf, kInf, node.outputs[0]};
  const size_t out = write(node, clamp.out);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    const uint32_t x = ids[a], y = ids[b], z = ids[out];
    if (op == "Add") return xnn_define_add2(sg, clamp.lo, clamp.hi, x, y, z, 0);
    if (op == "Sub") return xnn_define_subtract(sg, clamp.lo, clamp.hi, x, y, z, 0);
    if (op == "Mul") return xnn_define_multiply2(sg, clamp.lo, clamp.hi, x, y, z, 0);
    if (op == "Div") return xnn_define_divide(sg, clamp.lo, clamp.hi, x, y, z, 0);
    if (op == "Max") return xnn_define_maximum2(sg, x, y, z, 0);
    return xnn_define_minimum2(sg, x, y, z, 0);
  });
}

// Inference BatchNormalization as y = x * s + t, s = scale / sqrt(var + eps), t = B - mean * s,
// both folded into static per-channel tensors when the runtime is made (channels are the last
// NHWC axis; other ranks broadcast [C, 1, ...]); a Relu/Clip after it fuses into the add.
void XnnpackProgram::build_batch_norm(const Node& node) {
  if (attr_int(node.attrs, "training_mode", 0) != 0) unsupported(node, "training_mode = 1");
  const Shape xs = shape(node.inputs[0]);
  if (xs.size() < 2 || node.inputs.size() < 5) unsupported(node, "input of rank < 2");
  const size_t C = static_cast<size_t>(xs[1]);
  std::vector<size_t> dims{C};
  if (xs.size() != 4) dims.resize(xs.size() - 1, 1);
  const float eps = static_cast<float>(attr_float(node.attrs, "epsilon", 1e-5));
  const ValueId scale = node.inputs[1], bias = node.inputs[2], mean = node.inputs[3], var = node.inputs[4];
  const size_t in = read(node, node.inputs[0]);
  const size_t s = weight(node, {scale, var}, dims, C, [=](const float* const* w, float* d) {
    for (size_t c = 0; c < C; ++c) d[c] = w[0][c] / std::sqrt(w[1][c] + eps);
  });
  const size_t t = weight(node, {scale, bias, mean, var}, dims, C, [=](const float* const* w, float* d) {
    for (size_t c = 0; c < C; ++c) d[c] = w[1][c] - w[2][c] * (w[0][c] / std::sqrt(w[3][c] + eps));
  });
  const size_t scaled = temporary(physical_dims(shape(node.outputs[0]), View::Native));
  const Clamp clamp = fuse_clamps(node.outputs[0]);
  const size_t out = write(node, clamp.out);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    const xnn_status st = xnn_define_multiply2(sg, -kInf, kInf, ids[in], ids[s], ids[scaled], 0);
    return st != xnn_status_success ? st : xnn_define_add2(sg, clamp.lo, clamp.hi, ids[scaled], ids[t], ids[out], 0);
  });
}

// XNNPACK normalises over the innermost axis: the channels of an NHWC value, the last axis of others.
void XnnpackProgram::build_softmax(const Node& node) {
  const Shape xs = shape(node.inputs[0]);
  const int64_t r = static_cast<int64_t>(xs.size());
  int64_t axis = attr_int(node.attrs, "axis", fn_.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  const bool innermost = r == 4 ? axis == 1 && (fn_.opset >= 13 || xs[2] * xs[3] == 1) : axis == r - 1;
  if (!innermost) unsupported(node, "axis " + std::to_string(axis) + " is not the innermost axis in NHWC");
  const size_t in = read(node, node.inputs[0]), out = write(node, node.outputs[0]);
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) { return xnn_define_softmax(sg, ids[in], ids[out], 0); });
}

void XnnpackProgram::build_reshape(const Node& node) {
  const ValueId x = node.inputs[0], y = node.outputs[0];
  // Same element order on both sides: NHWC where that is the plain order, else NCHW as stored at
  // the function's boundary (read() and write() refuse a rank-4 side that is NHWC inside).
  const View in_view = plain_order(shape(x), View::Native) ? View::Native : View::Plain;
  const size_t in = read(node, x, in_view), out = write(node, y, View::Plain);
  const std::vector<size_t> dims = defs_[out].dims;
  add(node, [=](xnn_subgraph_t sg, const std::vector<uint32_t>& ids) {
    return xnn_define_static_reshape(sg, dims.size(), dims.data(), ids[in], ids[out], 0);
  });
}

}  // namespace tessera::xnnpack
