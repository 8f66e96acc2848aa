// OnednnProgram: pooling, layer norm, softmax, eltwise and binary anchors (see onednn_compiler.h).
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {

void OnednnProgram::build_pool(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0];
  const Shape &xs = fn_.value(x).type.shape, &ys = fn_.value(node.outputs[0]).type.shape;
  if (xs.size() < 3 || xs.size() > 5) unsupported(node, "only 1-D, 2-D and 3-D pooling");
  const size_t sp = xs.size() - 2;
  const bool global = node.op.rfind("Global", 0) == 0;
  const bool is_max = node.op.find("Max") != std::string::npos;
  Dims k(sp), st(sp, 1), dl(sp, 0), pl(sp, 0), pr(sp, 0);
  if (global) {
    std::copy(xs.begin() + 2, xs.end(), k.begin());
  } else {
    const auto kernel = attr_ints(node.attrs, "kernel_shape");
    const auto strides = attr_ints(node.attrs, "strides", std::vector<int64_t>(sp, 1));
    const auto dil = attr_ints(node.attrs, "dilations", std::vector<int64_t>(sp, 1));
    const auto pads = attr_ints(node.attrs, "pads", std::vector<int64_t>(2 * sp, 0));
    const std::string auto_pad = attr_string(node.attrs, "auto_pad", "NOTSET");
    if (kernel.size() != sp) unsupported(node, "kernel_shape missing or of the wrong rank");
    for (size_t i = 0; i < sp; ++i) {
      const int64_t ek = (kernel[i] - 1) * dil[i] + 1, in = xs[2 + i], out = ys[2 + i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + ek - in);
      k[i] = kernel[i];
      st[i] = strides[i];
      dl[i] = dil[i] - 1;
      if (auto_pad == "SAME_UPPER") pl[i] = total / 2;
      else if (auto_pad == "SAME_LOWER") pl[i] = total - total / 2;
      else if (auto_pad == "NOTSET") pl[i] = pads[i];
      pr[i] = (out - 1) * strides[i] + ek - in - pl[i];   // ceil_mode shows up here
    }
  }
  const bool include_pad = attr_int(node.attrs, "count_include_pad", 0) != 0;
  const algorithm alg = is_max ? algorithm::pooling_max
                               : include_pad ? algorithm::pooling_avg_include_padding
                                             : algorithm::pooling_avg_exclude_padding;
  const memory src = value_mem(x);
  const Dims yd(ys.begin(), ys.end());
  finish_anchor(n, dnnl::primitive_attr(), [&](const dnnl::primitive_attr& a) {
    dnnl::pooling_v2_forward::desc d(prop_kind::forward_inference, alg, src.get_desc(), any_md(yd), st, k, dl, pl, pr);
    return dnnl::pooling_v2_forward::primitive_desc(d, a, engine_);
  }, [&](const auto&) { return std::unordered_map<int, memory>{{DNNL_ARG_SRC, src}}; });
}

void OnednnProgram::build_layernorm(size_t n) {
  const Node& node = fn_.nodes[n];
  const Shape& xs = fn_.value(node.inputs[0]).type.shape;
  int64_t axis = attr_int(node.attrs, "axis", -1);
  if (axis < 0) axis += static_cast<int64_t>(xs.size());
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < xs.size(); ++i) (static_cast<int64_t>(i) < axis ? outer : inner) *= xs[i];
  const bool has_shift = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  auto flags = dnnl::normalization_flags::use_scale;
  if (has_shift) flags = flags | dnnl::normalization_flags::use_shift;
  const float eps = static_cast<float>(attr_float(node.attrs, "epsilon", 1e-5));
  const memory src = plain_mem(node.inputs[0], {outer, inner});
  finish_anchor(n, dnnl::primitive_attr(), [&](const dnnl::primitive_attr& a) {
    dnnl::layer_normalization_forward::desc d(prop_kind::forward_inference, src.get_desc(), eps, flags);
    return dnnl::layer_normalization_forward::primitive_desc(d, a, engine_);
  }, [&](const auto& pd) {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_SCALE, plain_mem(node.inputs[1], {inner})},
                                         {DNNL_ARG_MEAN, new_mem(pd.mean_desc())},
                                         {DNNL_ARG_VARIANCE, new_mem(pd.variance_desc())}};
    if (has_shift) args[DNNL_ARG_SHIFT] = plain_mem(node.inputs[2], {inner});
    return args;
  });
}

void OnednnProgram::build_softmax(size_t n, bool log) {
  const Node& node = fn_.nodes[n];
  const Shape& xs = fn_.value(node.inputs[0]).type.shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = attr_int(node.attrs, "axis", fn_.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  Dims d(xs.begin(), xs.end());
  int oneDNN_axis = static_cast<int>(axis);
  if (fn_.opset < 13) {   // opset < 13: softmax over the flattened trailing dims
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= xs[static_cast<size_t>(i)];
    d = {outer, inner};
    oneDNN_axis = 1;
  }
  const memory src = plain_mem(node.inputs[0], d);
  const size_t first = steps_.size();
  finish_anchor(n, dnnl::primitive_attr(), [&](const dnnl::primitive_attr& a) {
    if (log) {
      dnnl::logsoftmax_forward::desc ds(prop_kind::forward_inference, src.get_desc(), oneDNN_axis);
      return dnnl::primitive_desc(dnnl::logsoftmax_forward::primitive_desc(ds, a, engine_));
    }
    dnnl::softmax_forward::desc ds(prop_kind::forward_inference, src.get_desc(), oneDNN_axis);
    return dnnl::primitive_desc(dnnl::softmax_forward::primitive_desc(ds, a, engine_));
  }, [&](const auto&) { return std::unordered_map<int, memory>{{DNNL_ARG_SRC, src}}; });
  if (!log && oneDNN_axis == static_cast<int>(d.size()) - 1) host_softmax_step(first);
}

void OnednnProgram::build_eltwise(size_t n, const std::vector<EltwiseOp>& ops) {
  memory src = value_mem(eltwise_source(fn_, fn_.nodes[n]));
  // An op of several algorithms (HardSigmoid: linear, then clip): one primitive per algorithm,
  // the last the anchor that later nodes fuse into. Not the others as its post-ops: oneDNN 2.6
  // runs an eltwise with eltwise post-ops on its reference kernel, which on 1-D data writes
  // nothing at all (ONNX's test_hardsigmoid_example read back zeros).
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    std::optional<dnnl::eltwise_forward::primitive_desc> pd;
    try {
      pd.emplace(dnnl::eltwise_forward::desc(prop_kind::forward_inference, ops[i].alg, src.get_desc(), ops[i].alpha, ops[i].beta), engine_);
    } catch (const dnnl::error& e) {
      unsupported(fn_.nodes[n], std::string("oneDNN declines it: ") + e.what());
    }
    const memory dst = new_mem(src.get_desc());
    steps_.push_back({dnnl::eltwise_forward(*pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, {}});
    src = dst;
  }
  const EltwiseOp& last = ops.back();
  finish_anchor(n, dnnl::primitive_attr(), [&](const dnnl::primitive_attr& a) {
    dnnl::eltwise_forward::desc d(prop_kind::forward_inference, last.alg, src.get_desc(), last.alpha, last.beta);
    return dnnl::eltwise_forward::primitive_desc(d, a, engine_);
  }, [&](const auto&) { return std::unordered_map<int, memory>{{DNNL_ARG_SRC, src}}; });
}

void OnednnProgram::build_binary(size_t n, algorithm alg) {
  const Node& node = fn_.nodes[n];
  if (node.inputs.size() != 2) unsupported(node, "only two operands");
  const Shape& ys = fn_.value(node.outputs[0]).type.shape;
  ValueId a = node.inputs[0], b = node.inputs[1];
  auto full = [&](ValueId v) { return fn_.value(v).type.numel() == static_cast<int64_t>(TensorType{DType::f32, ys}.numel()); };
  dnnl::primitive_attr attr;
  if (!full(a)) {   // oneDNN broadcasts only src1: swap, and for Sub negate after (v - x = -(x - v))
    if (!full(b) || !(commutative(alg) || alg == algorithm::binary_sub))
      unsupported(node, "oneDNN broadcasts only the second operand");
    std::swap(a, b);
    if (alg == algorithm::binary_sub) {
      dnnl::post_ops neg;
      neg.append_eltwise(1.0f, algorithm::eltwise_linear, -1.0f, 0.0f);
      attr.set_post_ops(neg);
    }
  }
  const Dims yd(ys.begin(), ys.end());
  if (full(a) && full(b) && fn_.value(a).type.shape == ys && fn_.value(b).type.shape == ys && commutative(alg) &&
      value_mem(a).get_desc() == plain_md(yd) && value_mem(b).get_desc() != plain_md(yd))
    std::swap(a, b);   // the operand in another order (a convolution's nhwc output) sets the layout
  memory src0 = fn_.value(a).type.shape == ys ? value_mem(a) : plain_mem(a, yd);
  const Dims bd = padded(fn_.value(b).type.shape, ys.size());
  std::optional<memory::desc> src1_md;
  if (fn_.value(b).type.shape != ys && src0.get_desc() != plain_md(yd)) {
    // A blocked src0 (a convolution's output) with a broadcast src1 given plain has only oneDNN's
    // reference binary (ref:any, ~10x slower than a reorder to plain plus the JIT one). A per-channel
    // src1 ([1,C,1,1], SE blocks) in src0's channel blocks has the JIT one; else reorder src0 first.
    auto jit = [&](const memory::desc& md1) {
      dnnl::binary::primitive_desc probe(dnnl::binary::desc(alg, src0.get_desc(), md1, src0.get_desc()), attr, engine_);
      return std::string(probe.impl_info_str()).rfind("ref", 0) != 0;
    };
    const auto blocks = channel_blocks(src0.get_desc(), yd);
    if (blocks && bd.size() == 4 && bd[0] == 1 && bd[1] == yd[1] && bd[2] == 1 && bd[3] == 1 && jit(memory::desc(bd, f32, *blocks)))
      src1_md = memory::desc(bd, f32, *blocks);
    else if (!jit(plain_md(bd)))
      src0 = as_layout(a, plain_md(yd));
  }
  const memory src1 = fn_.value(b).type.shape == ys ? as_layout(b, src0.get_desc())
                      : src1_md ? as_layout(b, *src1_md) : plain_mem(b, bd);
  finish_anchor(n, attr, [&](const dnnl::primitive_attr& at) {
    dnnl::binary::desc d(alg, src0.get_desc(), src1.get_desc(), src0.get_desc());
    return dnnl::binary::primitive_desc(d, at, engine_);
  }, [&](const auto&) { return std::unordered_map<int, memory>{{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}}; });
}

}  // namespace tessera::onednn
