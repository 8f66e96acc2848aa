// Precision variant `onednn_int8` (onednn_compiler.h): an fp32 function whose convolutions and
// matmuls run as oneDNN u8 x s8 primitives, with the calibrated activation ranges the function's
// values carry (Value::range, set by an accuracy budget: src/runtime/int8_calibration.h).
//
//   fn(x f32, W f32, B f32) { Conv(x, W, B) ─▶ Relu } -> y f32          x.range = [lo, hi]
//     xq = reorder(x, scale 1/sx, dst zero point zx) u8      sx = (hi - lo) / 255, zx = round(-lo / sx)
//     Wq = round(W[o] / sw[o]) s8, sw[o] = r[o] max|W[o]| / 127   (host step, redone when W's pointer changes)
//     Bacc[o] = (B[o] - shift[o]) / (sx * sw[o])                 (host step, every run: O divisions)
//     y  = conv_u8s8(xq - zx, Wq) + Bacc   post-ops: binary_mul(sx * sw[o]), Relu, ...
//
// The accumulator is exact (int32); the f32 result is scaled per output channel by a binary
// post-op whose operand the weight step writes, so weights that are function inputs (every
// outlined function's weights are) need no values at compile time (oneDNN 2.x takes run-time
// output scales on a matmul, not on a convolution). Once built, the conv trades that post-op for
// output scales given their values on the first run, where oneDNN keeps its kernel
// (onednn_int8_oscale.cc: the binary_mul cost up to 1.5x the conv's time). The bias goes in as
// the primitive's own bias argument, in accumulator units: one per-channel post-op instead of
// three (scale, bias, bias shift). A matmul against 2-D weights takes sx * sw[n] as its run-time output scales and the
// bias shift as its bias: no per-column post-op; a batched source folds its rows into one rank-2
// GEMM (oneDNN blocks the weights once). The post-op chain then continues as in f32 (Relu, Clip, a
// residual `sum`, ...): the function's boundary stays f32, so an int8 partition crosses into and
// out of fp32 ones like any other onednn function. Inside, a value between int8 convolutions
// stays u8: its producer writes it at its readers' source scale (onednn_int8_chain.h).
//
// What runs int8: a 2-D Conv (not transposed; any group count oneDNN takes) or a MatMul/Gemm
// whose weights are a 2-D function input or constant (Gemm: alpha 1, beta 1), reading a value
// with a range; and a MatMul whose right operand is computed and ranged too (both quantized per
// tensor: onednn_int8_act_matmul.cc). Every other node, and an anchor oneDNN declines in int8 (the probe below), is
// built as in f32. A function with no int8 anchor is KernelUnsupported: it would be onednn under
// another name.
//
// Bias correction: where the anchor's output value carries Value::int8_bias_shift (the mean error
// of its int8 result per output channel on the calibration data: src/runtime/int8_bias_correction.h),
// it is subtracted from the bias in accumulator units (above), before Relu/Clip/sum.
//
// Weight scales: r[o] in {1, 0.98, ..., 0.60} is the ratio whose rounding of W[o] has the least
// squared error (MSE-optimal clipping): clipping a channel's few largest weights to a finer step
// for all the others. r[o] = 1 (plain max/127) where nothing is gained.
//
// Error: activations round to sx / 2 at most inside the range and saturate outside it; weights
// to sw[o] / 2 inside [-127 sw[o], 127 sw[o]]. Both are measured, per candidate on the calibration data and end to end, by the
// accuracy budget; nothing here bounds them.
#include <algorithm>
#include <cmath>
#include <memory>

#include "backends/onednn/onednn_act_quant.h"
#include "backends/onednn/onednn_anchor.h"
#include "backends/onednn/onednn_int8_chain.h"
#include "backends/onednn/onednn_weight_quant.h"

namespace tessera::onednn {

namespace {

constexpr auto u8 = memory::data_type::u8, s8 = memory::data_type::s8;

}  // namespace

memory OnednnProgram::quantize_source(const memory& from, const memory::desc& want, float scale, int32_t zero_point) {
  memory to = new_mem(want);
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {1.0f / scale});
  if (zero_point != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {zero_point});
  // oneDNN 2.6's reorder that quantizes a row-major f32 tensor into another order of its dims
  // (nchw -> nhwc: a function's input into its first int8 conv) runs at half the speed of the two
  // apart: quantized in row-major order, then the u8 bytes moved (1x3x224x224: 0.118 against
  // 0.021 + 0.037 ms; 1x64x56x56: 0.160 against 0.080). From a blocked f32 layout the one reorder
  // is the faster (nChw16c -> nhwc: 1.3-2x), and so it stays there.
  const memory::desc in_order = plain_md(from.get_desc().dims(), want.data_type());   // u8, or s8 for a right operand
  const Dims dims = from.get_desc().dims(), row_major = *strides_of(in_order);
  const std::optional<Dims> source = strides_of(from.get_desc()), target = strides_of(want);
  memory quantized = to;
  if (source && target && same_addressing(dims, *source, row_major) && !same_addressing(dims, *target, row_major))
    quantized = new_mem(in_order);
  dnnl::reorder::primitive_desc pd(engine_, from.get_desc(), engine_, quantized.get_desc(), attr);
  steps_.push_back({dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, quantized}}, {}});
  if (quantized.get() != to.get()) add_reorder(quantized, to);
  return to;
}

std::shared_ptr<const uint64_t> OnednnProgram::add_weight_quantizer(ValueId w, const memory::desc& user_s8, const memory::desc& want,
                                                                   const memory& scales, int64_t channels, int64_t per_channel,
                                                                   int64_t channel_stride, int64_t elem_stride, float act_scale,
                                                                   memory& weights) {
  memory plain = new_mem(user_s8);
  weights = new_mem(want);
  dnnl::reorder reorder(plain, weights);   // adds oneDNN's compensation (source zero point) where `want` asks for it
  const WeightQuantizer quantize{channels, per_channel, channel_stride, elem_stride, act_scale};
  auto done_for = std::make_shared<const void*>(nullptr);
  auto written = std::make_shared<uint64_t>(0);
  // Reads w from the frame (an input or constant, never planned) and writes plain, weights and
  // scales, which must hold from run to run (skipped while w's pointer is the same and w does not
  // vary): all three listed as sources, so the memory plan never moves them.
  steps_.push_back({{}, {{DNNL_ARG_MULTIPLE_SRC, plain}, {DNNL_ARG_MULTIPLE_SRC + 1, weights}, {DNNL_ARG_MULTIPLE_SRC + 2, scales}},
                    [this, w, plain, weights, scales, reorder, quantize, done_for, written]() mutable {
                      const float* data = frame_.cview(w).as<float>();
                      if (data == *done_for && !varying_[static_cast<size_t>(w)]) return;   // same weights: quantized already
                      quantize(data, static_cast<int8_t*>(plain.get_data_handle()), static_cast<float*>(scales.get_data_handle()));
                      reorder.execute(stream_, plain, weights);
                      *done_for = data;
                      ++*written;
                    }, "host:quantize_weights"});
  return written;
}

std::optional<memory> OnednnProgram::bias_shift(ValueId y, const Dims& per_channel, int64_t channels) {
  const std::vector<float>& shift = fn_.value(y).int8_bias_shift;
  if (shift.empty()) return std::nullopt;
  if (static_cast<int64_t>(shift.size()) != channels)
    throw KernelError("onednn_int8: '" + fn_.value(y).name + "' has " + std::to_string(shift.size()) + " bias shifts for " +
                      std::to_string(channels) + " channels");
  memory m = new_mem(plain_md(per_channel));   // written here, only read by steps: the memory plan leaves it put
  std::copy(shift.begin(), shift.end(), static_cast<float*>(m.get_data_handle()));
  return m;
}

memory OnednnProgram::add_accumulator_bias(ValueId b, const std::optional<memory>& shift, const memory& scales,
                                           std::shared_ptr<const uint64_t> scales_written, int64_t channels,
                                           const memory::desc& md) {
  memory acc = new_mem(md);
  const std::optional<memory> real = b != kNoValue ? std::optional<memory>(view_mem(b, plain_md({channels}))) : std::nullopt;
  const bool varies = b != kNoValue && varying_[static_cast<size_t>(b)];
  // (b[o] - shift[o]) / scale[o], scale[o] = sx * sw[o] (written by the weight step before it):
  // O divisions, redone when the weight step has written the scales since, when b's pointer
  // changes, and on every run where b varies. Reads b, shift and scales; acc is listed as read
  // too, so that the memory plan leaves it where it is and its values hold from run to run.
  std::unordered_map<int, memory> args{{DNNL_ARG_MULTIPLE_SRC, scales}, {DNNL_ARG_MULTIPLE_SRC + 1, acc}};
  if (real) args[DNNL_ARG_MULTIPLE_SRC + 2] = *real;
  if (shift) args[DNNL_ARG_MULTIPLE_SRC + 3] = *shift;
  struct Seen {
    uint64_t written = 0;
    const void* bias = nullptr;
  };
  auto seen = std::make_shared<Seen>();
  steps_.push_back({{}, std::move(args), [real, shift, scales, scales_written, varies, seen, acc, channels] {
                      const float* bv = real ? static_cast<const float*>(real->get_data_handle()) : nullptr;
                      if (*scales_written == seen->written && bv == seen->bias && !varies) return;
                      const float* sv = shift ? static_cast<const float*>(shift->get_data_handle()) : nullptr;
                      const float* scale = static_cast<const float*>(scales.get_data_handle());
                      float* out = static_cast<float*>(acc.get_data_handle());
                      for (int64_t o = 0; o < channels; ++o) out[o] = ((bv ? bv[o] : 0.0f) - (sv ? sv[o] : 0.0f)) / scale[o];
                      *seen = {*scales_written, bv};
                    }, "host:bias_to_accumulator"});
  return acc;
}

bool OnednnProgram::build_conv_int8(size_t n, bool probe_only) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0], w = node.inputs[1];
  const ValueId b = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  const Value &xv = fn_.value(x), &wv = fn_.value(w);
  const std::optional<ActQuant> q = act_quant(xv);
  if (!q || xv.type.shape.size() != 4 || wv.kind == ValueKind::Intermediate || wv.type.dtype != DType::f32) return false;
  if (b != kNoValue && fn_.value(b).kind == ValueKind::Intermediate) return false;
  const Shape &xs = xv.type.shape, &ws = wv.type.shape, &ys = fn_.value(node.outputs[0]).type.shape;
  const ConvGeometry geo = conv_geometry(node, xs, ws, ys, false);
  const int64_t O = ys[1];
  const Dims xd(xs.begin(), xs.end()), yd(ys.begin(), ys.end()), per_oc{1, O, 1, 1};
  const bool has_shift = !fn_.value(node.outputs[0]).int8_bias_shift.empty();
  // The bias (less the bias shift) in accumulator units, the primitive's own bias argument: one
  // per-channel post-op (the scale) instead of three (scale, bias, shift).
  const bool has_bias = b != kNoValue || has_shift;
  dnnl::post_ops po;
  po.append_binary(algorithm::binary_mul, plain_md(per_oc));
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  if (q->zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {q->zero_point});
  memory::data_type dst_type = memory::data_type::f32;   // u8 where the chain's end is kept (onednn_int8_chain.h)
  auto make = [&](const dnnl::primitive_attr& a) {
    auto d = has_bias ? dnnl::convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct, any_md(xd, u8),
                                                        any_md(geo.wdims, s8), plain_md({O}), any_md(yd, dst_type), geo.st, geo.dl,
                                                        geo.pl, geo.pr)
                      : dnnl::convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct, any_md(xd, u8),
                                                        any_md(geo.wdims, s8), any_md(yd, dst_type), geo.st, geo.dl, geo.pl, geo.pr);
    return dnnl::convolution_forward::primitive_desc(d, a, engine_);
  };
  try {   // the probe: oneDNN may have no int8 kernel for this shape, grouping or zero point
    const auto pd = make(attr);
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return false;   // reference int8 code: slower than f32
  } catch (const dnnl::error&) {
    return false;
  }
  if (probe_only) return true;
  computes_in_int8_ = true;
  const std::optional<memory> shift = bias_shift(node.outputs[0], per_oc, O);
  memory scales;
  std::shared_ptr<const uint64_t> scales_written;
  auto wire = [&](const auto& pd) {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, int8_source(x, pd.src_desc(), q->scale, q->zero_point)}};
    memory weights;
    scales = new_mem(plain_md(per_oc));
    const int64_t per = wv.type.numel() / O;
    scales_written = add_weight_quantizer(w, memory::desc(geo.wdims, s8, geo.wstrides), pd.weights_desc(), scales, O, per, per, 1,
                                          q->scale, weights);
    args[DNNL_ARG_WEIGHTS] = weights;
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = scales;
    if (has_bias) args[DNNL_ARG_BIAS] = add_accumulator_bias(b, shift, scales, scales_written, O, plain_md({O}));
    return args;
  };
  // A chain that ends in a value kept in u8 writes it as u8 (onednn_int8_chain.h); f32 otherwise.
  ValueId residual = kNoValue;
  const ValueId end = predicted_chain_end(n, &residual);
  const bool u8_residual = residual != kNoValue && u8_of_.count(residual);
  if (u8_residual || keeps_u8(end)) finish_int8_conv(n, attr, dst_type, make, wire, end);
  else finish_anchor(n, attr, make, wire);
  settle_output_scales(anchor_step_, scales, O, scales_written);   // the scales as output scales where oneDNN keeps its kernel
  return true;
}

bool OnednnProgram::build_matmul_int8(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId a = node.inputs[0], b = node.inputs[1];
  if (fn_.value(b).range) return build_act_matmul_int8(n);   // a computed right operand (onednn_int8_act_matmul.cc)
  const Value &av = fn_.value(a), &bv = fn_.value(b);
  const std::optional<ActQuant> q = act_quant(av);
  if (!q || bv.kind == ValueKind::Intermediate || bv.type.dtype != DType::f32 || bv.type.shape.size() != 2) return false;
  Shape as = av.type.shape;
  const Shape& bs = bv.type.shape;
  memory::desc a_md;
  Dims yd, bd;
  bool trans_b = false, rows_folded = false;
  ValueId c = kNoValue;
  if (node.op == "Gemm") {
    if (attr_float(node.attrs, "alpha", 1.0) != 1.0) return false;
    const bool ta = attr_int(node.attrs, "transA", 0) != 0;
    trans_b = attr_int(node.attrs, "transB", 0) != 0;
    const int64_t M = ta ? as[1] : as[0], K = ta ? as[0] : as[1], N = trans_b ? bs[0] : bs[1];
    a_md = memory::desc({M, K}, memory::data_type::f32, ta ? Dims{1, M} : Dims{K, 1});
    yd = {M, N};
    bd = {K, N};
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      c = node.inputs[2];
      if (attr_float(node.attrs, "beta", 1.0) != 1.0 || fn_.value(c).kind == ValueKind::Intermediate) return false;
    }
  } else if (as.size() > 2) {
    // Rows folded, as build_matmul's gemm2d: [B*M, K] x [K, N] at rank 2, where oneDNN lays the
    // s8 weights out in its blocks once (BA16a64b4a) instead of copying panels of a plain B at
    // every call, as its brgemm matmul does at rank 3 and 4 (BERT's 1xSxH x HxH). Post-op
    // operands fold the same way (post_op_rank_); the plain bytes of A and of the result are the same.
    const int64_t K = as.back(), rows = av.type.numel() / K;
    a_md = plain_md({rows, K});
    yd = {rows, bs[1]};
    bd = {bs[0], bs[1]};
    rows_folded = true;
  } else {
    if (as.size() < 2) return false;
    a_md = plain_md(Dims(as.begin(), as.end()));
    yd = Dims(as.begin(), as.end());
    yd.back() = bs[1];
    bd = padded(bs, as.size());
  }
  const size_t rank = yd.size();
  const int64_t K = bd[rank - 2], N = bd[rank - 1];
  // Weights as stored: [K, N] row-major, or [N, K] under transB; seen with dims bd.
  Dims b_strides(rank, K * N);
  b_strides[rank - 2] = trans_b ? 1 : N;
  b_strides[rank - 1] = trans_b ? K : 1;
  Dims per_n(rank, 1);
  per_n.back() = N;
  const std::optional<memory> shift = bias_shift(node.outputs[0], per_n, N);
  // The per-column scale sx * sw[n] as the matmul's output scales, given at run time (the weight
  // step writes them), where the epilogue applies them, and the bias shift as its bias in
  // accumulator units: no per-column binary post-op of its own. Gemm's C stays a post-op, in
  // real units after the scale.
  dnnl::post_ops po;
  const Dims cd = c != kNoValue ? padded(fn_.value(c).type.shape, rank) : Dims{};
  if (c != kNoValue) po.append_binary(algorithm::binary_add, plain_md(cd));
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << (rank - 1), {DNNL_RUNTIME_F32_VAL});
  attr.set_post_ops(po);
  if (q->zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {q->zero_point});
  const memory::desc a_u8 = plain_md(a_md.dims(), u8);
  auto make = [&](const dnnl::primitive_attr& at) {
    auto d = shift ? dnnl::matmul::desc(a_u8, any_md(bd, s8), plain_md(per_n), plain_md(yd))
                   : dnnl::matmul::desc(a_u8, any_md(bd, s8), plain_md(yd));
    return dnnl::matmul::primitive_desc(d, at, engine_);
  };
  try {
    const auto pd = make(attr);
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return false;
  } catch (const dnnl::error&) {
    return false;
  }
  computes_in_int8_ = true;
  post_op_rank_ = rows_folded ? 2 : 0;
  finish_anchor(n, attr, make, [&](const auto& pd) {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, shared_quantize(a, view_mem(a, a_md), a_u8, q->scale, q->zero_point)}};
    memory scales = new_mem(plain_md({N})), weights;
    const auto written = add_weight_quantizer(b, memory::desc(bd, s8, b_strides), pd.weights_desc(), scales, N, K, trans_b ? K : 1,
                                              trans_b ? 1 : N, q->scale, weights);
    args[DNNL_ARG_WEIGHTS] = weights;
    args[DNNL_ARG_ATTR_OUTPUT_SCALES] = scales;
    if (c != kNoValue) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = view_mem(c, plain_md(cd));
    if (shift) args[DNNL_ARG_BIAS] = add_accumulator_bias(kNoValue, shift, scales, written, N, plain_md(per_n));
    return args;
  });
  post_op_rank_ = 0;
  return true;
}

}  // namespace tessera::onednn
