// OnednnProgram: quantized groups as one int8 convolution or matmul (onednn_qdq.h); QuantizeLinear,
// DequantizeLinear, Cast to f32 and DynamicQuantizeLinear on their own.
//
// An int8 primitive's source is the quantized tensor itself (u8 or s8, in the layout oneDNN picks:
// nhwc for convolutions), its weights the s8 constant reordered once at compile time (oneDNN adds
// its compensation for an s8 source or a source zero point in that reorder), and it writes the
// quantized result: a chain of groups passes u8 from one primitive to the next, as ONNX Runtime's
// QLinearConv chain does. A float bias that is a function input is divided into accumulator units
// by a host step on every run (one division per output channel).
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "backends/onednn/onednn_anchor.h"
#include "backends/onednn/onednn_host_quant.h"

namespace tessera::onednn {

void OnednnProgram::find_int8() {
  std::vector<char> reads_group(fn_.nodes.size(), 0);
  std::vector<NodeId> source_dqs;   // DequantizeLinear nodes groups read through
  for (size_t n = 0; n < fn_.nodes.size(); ++n) {
    const Node& node = fn_.nodes[n];
    const std::string& op = node.op;
    if (op == "Add") {
      if (auto m = match_qadd(fn_, consumers_, static_cast<NodeId>(n))) {
        for (NodeId id : m->nodes)
          if (static_cast<size_t>(id) != n) absorbed_[static_cast<size_t>(id)] = 1;
        reads_group[n] = 1;
        source_dqs.push_back(m->a_dq);
        source_dqs.push_back(m->b_dq);
        qadd_at_.emplace(n, std::move(*m));
      }
      continue;
    }
    if (op != "Conv" && op != "MatMul" && op != "Gemm" && op != "QLinearConv" && op != "QLinearMatMul") continue;
    std::string why;
    auto m = match_int8(fn_, consumers_, static_cast<NodeId>(n), &why);
    if (!m) {
      if (op == "QLinearConv" || op == "QLinearMatMul") unsupported(node, why.empty() ? "not an int8 operation oneDNN takes" : why);
      continue;
    }
    for (NodeId id : m->nodes)   // the anchor stays: the group is built when the loop reaches it
      if (static_cast<size_t>(id) != n) absorbed_[static_cast<size_t>(id)] = 1;
    reads_group[n] = 1;
    if (m->src_dq != kNoNode) source_dqs.push_back(m->src_dq);
    int8_at_.emplace(n, std::move(*m));
  }
  // A source DequantizeLinear read by groups only is not run: the groups read its input.
  for (NodeId dq : source_dqs) {
    const ValueId v = fn_.node(dq).outputs[0];
    bool only_groups = !frame_.is_function_output(v);
    for (NodeId c : consumers_[static_cast<size_t>(v)]) only_groups = only_groups && reads_group[static_cast<size_t>(c)];
    if (only_groups) absorbed_[static_cast<size_t>(dq)] = 1;
  }
}

void OnednnProgram::build_qadd(size_t n, const QAddMatch& m) {
  const Node& node = fn_.nodes[n];
  // a, b and the result in one layout: a's own when it has no blocks (an nhwc convolution output),
  // else plain; b converted to it when it lives in another.
  memory a;
  const memory::desc y_md = elementwise_dst(m.a, dnnl_type(m.yq.dtype), a);
  const dnnl_memory_desc_t& raw = y_md.data;
  const Dims strides(raw.format_desc.blocking.strides, raw.format_desc.blocking.strides + raw.ndims);
  const memory b = as_layout(m.b, memory::desc(y_md.dims(), dnnl_type(m.bq.dtype), strides));
  const int64_t count = fn_.value(m.out).type.numel();
  if (a.get_desc().get_size() != static_cast<size_t>(count) || b.get_desc().get_size() != static_cast<size_t>(count))
    unsupported(node, "quantized operands that are not dense");
  const memory y = dst_mem(m.out, y_md);
  auto host = [](const QuantInfo& q) { return HostQuant{q.dtype == DType::i8, q.scale[0], q.zero_point[0]}; };
  const HostQuant aq = host(m.aq), bq = host(m.bq), yq = host(m.yq);
  const float lo = m.clip ? m.clip->first : -INFINITY, hi = m.clip ? m.clip->second : INFINITY;
  // For the memory plan: reads a and b, writes all of y (handles read when it runs).
  steps_.push_back({{}, {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, y}}, [a, b, y, aq, bq, yq, lo, hi, count] {
                      quantized_add(a.get_data_handle(), aq, b.get_data_handle(), bq, y.get_data_handle(), yq, lo, hi, count);
                    }, "host:quantized_add"});
}

void OnednnProgram::build_int8(size_t n, const Int8Match& m) {
  const Node& node = fn_.nodes[n];
  const Shape &xs = fn_.value(m.x).type.shape, &ws = fn_.value(m.w).type.shape, &ys = fn_.value(m.out).type.shape;
  const memory::data_type xt = dnnl_type(m.xq.dtype), yt = dnnl_type(m.yq.dtype), s8 = memory::data_type::s8;
  const bool conv = m.kind == Int8Match::Kind::conv;
  const int64_t channels = conv ? ws[0] : (m.trans_b ? ws[0] : ws[1]);

  // dst = post-op(scale[c] * (acc + bias[c])) + yz, where acc sums (xq - xz) * wq exactly.
  const float xs_ = m.xq.scale[0], ys_ = m.yq.scale[0];
  std::vector<float> scales(m.wq.scale.size()), acc_unit(static_cast<size_t>(channels));
  for (size_t c = 0; c < scales.size(); ++c) scales[c] = xs_ * m.wq.scale[c] / ys_;
  for (size_t c = 0; c < acc_unit.size(); ++c) acc_unit[c] = xs_ * m.wq.scale[m.wq.scale.size() == 1 ? 0 : c];
  dnnl::primitive_attr attr;
  attr.set_output_scales(scales.size() > 1 ? 1 << 1 : 0, scales);
  if (m.xq.zero_point[0] != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {m.xq.zero_point[0]});
  if (m.yq.zero_point[0] != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {m.yq.zero_point[0]});
  dnnl::post_ops po;
  if (m.clip) {
    // The post-op sees real values divided by the output scale.
    const float lo = m.clip->first / ys_, hi = m.clip->second / ys_;
    if (lo == 0.0f && std::isinf(hi)) po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
    else po.append_eltwise(1.0f, algorithm::eltwise_clip, std::max(lo, -FLT_MAX), std::min(hi, FLT_MAX));
  }
  // Round (half to even) before the destination zero point is added: oneDNN adds it to the f32
  // value and rounds the sum, where a value just above a half (23.500008 + 119) lands on the
  // half in f32 and rounds to even, one step below ONNX's round(v) + zero point (ONNX Runtime's
  // requantization, and the spec's QuantizeLinear). Rounded first, the sum is an exact integer.
  if (m.yq.zero_point[0] != 0) po.append_eltwise(1.0f, algorithm::eltwise_round, 0.0f, 0.0f);
  if (po.len() > 0) attr.set_post_ops(po);

  const bool has_bias = !m.bias_acc.empty() || m.bias != kNoValue;
  const memory::desc bias_md = conv ? plain_md({channels}) : plain_md({1, channels});
  std::optional<memory> bias;
  if (has_bias) {
    bias = new_mem(bias_md);
    float* b = static_cast<float*>(bias->get_data_handle());
    if (!m.bias_acc.empty()) {
      std::copy(m.bias_acc.begin(), m.bias_acc.end(), b);
    } else if (fn_.value(m.bias).is_constant() && fn_.value(m.bias).data) {
      const float* real = frame_.cview(m.bias).as<float>();
      for (size_t c = 0; c < acc_unit.size(); ++c) b[c] = real[c] / acc_unit[c];
    } else {
      const ValueId v = m.bias;
      // Reads the frame's bias (never planned) and writes through `b`, a pointer taken now: the
      // buffer is listed as a source so that the memory plan never moves it.
      steps_.push_back({{}, {{DNNL_ARG_SRC, *bias}}, [this, v, b, acc_unit] {
                          const float* real = frame_.cview(v).as<float>();
                          for (size_t c = 0; c < acc_unit.size(); ++c) b[c] = real[c] / acc_unit[c];
                        }, "host:bias_to_accumulator"});
    }
  }

  std::unordered_map<int, memory> args;
  memory::desc dst_md;
  try {
    if (conv) {
      const ConvGeometry geo = conv_geometry(node, xs, ws, ys, false);
      const memory::desc user_w(geo.wdims, s8, geo.wstrides);
      const Dims xd(xs.begin(), xs.end()), yd(ys.begin(), ys.end());
      auto d = has_bias ? dnnl::convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct, any_md(xd, xt),
                                                          any_md(geo.wdims, s8), bias_md, any_md(yd, yt), geo.st, geo.dl, geo.pl, geo.pr)
                        : dnnl::convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct, any_md(xd, xt),
                                                          any_md(geo.wdims, s8), any_md(yd, yt), geo.st, geo.dl, geo.pl, geo.pr);
      dnnl::convolution_forward::primitive_desc pd(d, attr, engine_);
      args[DNNL_ARG_SRC] = as_layout(m.x, pd.src_desc());
      args[DNNL_ARG_WEIGHTS] = weights_mem(m.w, user_w, pd.weights_desc());
      dst_md = pd.dst_desc();
      steps_.push_back({dnnl::convolution_forward(pd), {}, {}});
    } else {
      const int64_t M = xs[0], K = xs[1], N = channels;
      const memory::desc user_w({K, N}, s8, m.trans_b ? Dims{1, K} : Dims{N, 1});
      const memory::desc src_md = plain_md({M, K}, xt);
      auto d = has_bias ? dnnl::matmul::desc(src_md, any_md({K, N}, s8), bias_md, plain_md({M, N}, yt))
                        : dnnl::matmul::desc(src_md, any_md({K, N}, s8), plain_md({M, N}, yt));
      dnnl::matmul::primitive_desc pd(d, attr, engine_);
      args[DNNL_ARG_SRC] = as_layout(m.x, src_md);
      args[DNNL_ARG_WEIGHTS] = weights_mem(m.w, user_w, pd.weights_desc());
      dst_md = pd.dst_desc();
      steps_.push_back({dnnl::matmul(pd), {}, {}});
    }
  } catch (const dnnl::error& e) {
    unsupported(node, std::string("oneDNN declines the int8 primitive: ") + e.what());
  }
  if (bias) args[DNNL_ARG_BIAS] = *bias;
  // The step is in place; its dst may add a final reorder (a function output in another layout).
  Step& step = steps_.back();
  args[DNNL_ARG_DST] = dst_mem(m.out, dst_md);
  step.args = std::move(args);
}

memory::desc OnednnProgram::elementwise_dst(ValueId x, memory::data_type t, memory& src) {
  // The result keeps the source's layout (an nhwc u8 tensor dequantizes to nhwc f32) unless the
  // source is in channel blocks or a view with an offset, which are read plain.
  src = value_mem(x);
  if (const std::optional<Dims> strides = strides_of(src.get_desc())) return memory::desc(src.get_desc().dims(), t, *strides);
  src = plain_mem(x, dims_of(x));
  return plain_md(src.get_desc().dims(), t);
}

void OnednnProgram::build_cast(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0], y = node.outputs[0];
  // To f32 only: ONNX casts floats to integers by truncation, a reorder rounds.
  if (fn_.value(y).type.dtype != DType::f32) unsupported(node, "a Cast to another type than f32");
  memory src;
  const memory::desc dst_md = elementwise_dst(x, memory::data_type::f32, src);
  memory dst = dst_mem(y, dst_md);
  add_reorder(src, dst);   // u8, s8, s32 -> f32: exact below 2^24, rounded to nearest even above, as ref's
}

void OnednnProgram::build_dynamic_quantize(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0];
  if (fn_.value(x).type.dtype != DType::f32) unsupported(node, "a source that is not f32");
  memory src;
  const memory::desc dst_md = elementwise_dst(x, memory::data_type::u8, src);
  if (src.get_desc().get_size() != static_cast<size_t>(fn_.value(x).type.numel()) * sizeof(float))
    unsupported(node, "a source that is not dense");
  const memory y = dst_mem(node.outputs[0], dst_md);
  const memory scale = dst_mem(node.outputs[1], plain_md({1})), zero = dst_mem(node.outputs[2], plain_md({1}, memory::data_type::u8));
  const int64_t count = fn_.value(x).type.numel();
  // ref's arithmetic, bit for bit (onednn_host_quant.h). Handles are read when it runs: function
  // inputs and outputs are bound per run.
  // For the memory plan: reads src, writes all of y, scale and zero. Only DNNL_ARG_DST lets a
  // buffer move, so the one-element scale and zero point stay where they are.
  steps_.push_back({{}, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, y}, {DNNL_ARG_DST_1, scale}, {DNNL_ARG_DST_2, zero}},
                    [src, y, scale, zero, count] {
                      dynamic_quantize(static_cast<const float*>(src.get_data_handle()), count, static_cast<uint8_t*>(y.get_data_handle()),
                                       static_cast<float*>(scale.get_data_handle()), static_cast<uint8_t*>(zero.get_data_handle()));
                    }, "host:dynamic_quantize"});
}

void OnednnProgram::build_quantize(size_t n) {
  const Node& node = fn_.nodes[n];
  const bool dequantize = node.op == "DequantizeLinear";
  // A DequantizeLinear per axis (an int8 weight outside a group) with zero points 0 is a reorder
  // with one scale per index along the axis.
  const auto q = node_quant(fn_, node, dequantize);
  if (!q) unsupported(node, "scale and zero point must be constants, per tensor");
  const bool per_axis = q->scale.size() > 1;
  const ValueId x = node.inputs[0], y = node.outputs[0];
  if (per_axis && std::any_of(q->zero_point.begin(), q->zero_point.end(), [](int32_t z) { return z != 0; })) {
    // oneDNN 2.x's reorder takes one zero point: a host pass with ref's arithmetic (u8 weights
    // quantized per channel around 128), on plain memory.
    const DType xt = fn_.value(x).type.dtype;
    if (!dequantize || (xt != DType::u8 && xt != DType::i8)) unsupported(node, "zero points per axis");
    const Shape& shape = fn_.value(x).type.shape;
    int64_t axis = attr_int(node.attrs, "axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(shape.size());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    const int64_t len = shape[static_cast<size_t>(axis)];
    const memory src = plain_mem(x);
    const memory dst = dst_mem(y, plain_md(dims_of(y)));
    // Reads src, writes all of dst (the scales and zero points are the step's own copies).
    steps_.push_back({{}, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, [src, dst, q = *q, signed_ = xt == DType::i8, outer, len, inner] {
                        dequantize_axis(src.get_data_handle(), signed_, q.zero_point.data(), q.scale.data(),
                                        static_cast<float*>(dst.get_data_handle()), outer, len, inner);
                      }, "host:dequantize_axis"});
    return;
  }
  memory src;
  const memory::desc dst_md = elementwise_dst(x, dnnl_type(fn_.value(y).type.dtype), src);
  const float s = q->scale[0];
  const int32_t z = q->zero_point[0];
  if (dequantize) {
    // (q - z) * s: a reorder with a source zero point and a scale, exact in f32 like ref's.
    dnnl::primitive_attr attr;
    if (per_axis) {
      const auto rank = static_cast<int64_t>(fn_.value(x).type.shape.size());
      int64_t axis = attr_int(node.attrs, "axis", 1);
      if (axis < 0) axis += rank;
      attr.set_output_scales(1 << axis, q->scale);
    } else {
      attr.set_output_scales(0, {s});
    }
    if (z != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {z});
    std::optional<dnnl::reorder::primitive_desc> pd;
    try {
      pd.emplace(engine_, src.get_desc(), engine_, dst_md, attr);
    } catch (const dnnl::error& e) {
      unsupported(node, std::string("oneDNN declines the reorder: ") + e.what());
    }
    memory dst = dst_mem(y, dst_md);
    steps_.push_back({dnnl::reorder(*pd), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, {}});
    return;
  }
  // round(x / s) + z, saturated: a binary division by the scale with post-ops round (half to
  // even) and + z, written as u8/s8. A reorder would multiply by 1 / s and add z before rounding,
  // which moves values that lie on or near a rounding boundary by one step against ONNX's x / s.
  const Dims ones(src.get_desc().dims().size(), 1);
  memory scale = new_mem(plain_md(ones));
  *static_cast<float*>(scale.get_data_handle()) = s;
  dnnl::post_ops po;
  po.append_eltwise(1.0f, algorithm::eltwise_round, 0.0f, 0.0f);
  if (z != 0) po.append_eltwise(1.0f, algorithm::eltwise_linear, 1.0f, static_cast<float>(z));
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  std::optional<dnnl::binary::primitive_desc> pd;
  try {
    pd.emplace(dnnl::binary::desc(algorithm::binary_div, src.get_desc(), scale.get_desc(), dst_md), attr, engine_);
  } catch (const dnnl::error& e) {
    unsupported(node, std::string("oneDNN declines the quantizing binary: ") + e.what());
  }
  memory dst = dst_mem(y, dst_md);
  steps_.push_back({dnnl::binary(*pd), {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, scale}, {DNNL_ARG_DST, dst}}, {}});
}

}  // namespace tessera::onednn
