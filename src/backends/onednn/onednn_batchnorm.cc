// OnednnProgram::build_batchnorm: BatchNormalization (inference), over channel blocks or nhwc as a
// depthwise 1x1 convolution, elsewhere oneDNN's batch normalization primitive.
//
// Inference BatchNormalization is a per-channel affine map, y = x * w[c] + b[c] with
// w = scale / sqrt(var + eps) and b = shift - mean * w. Where it follows a conv directly the
// exporter folds it into the conv's weights; a pre-activation network (DenseNet: BatchNorm ->
// ReLU -> 1x1 conv on every concatenated input) keeps it as a node of its own, 62 in densenet121.
// oneDNN's bnorm_jit runs it at 1.3-1.9x the time of its depthwise conv kernel (jit_dw) on the
// same blocked memory (1 thread, Zen 4: 0.084 against 0.065 ms at 256x56x56, 0.040 against
// 0.028 at 512x28x28, 0.021 against 0.013 at 1024x14x14), with a ReLU post-op either way (ONNX
// Runtime's NCHWc transformer makes the same rewrite). So the node becomes
//
//   BatchNormalization(x, scale, shift, mean, var) -> Relu    (bnorm_jit + relu post-op)
//   Conv(x, w[C,1,1,1,1], b[C], group=C) -> Relu                (jit_dw + relu post-op)
//
// w and b come from the node's parameters, which are usually function inputs (weights are
// parameters of an outlined function): a host step computes them before the conv, once, and
// again only when a parameter's address changes or it is an input whose contents vary between
// runs or a value computed inside the function. They keep their bytes from run to run, so the
// step lists them as reads (the memory plan then never shares them, onednn_memory_plan.cc).
// Only where the source is in channel blocks or nhwc and oneDNN has a real kernel for the conv;
// plain sources (jit_dw has none) keep the normalization primitive. Results differ from it by
// rounding only (x * w + b against ((x - mean) / sqrt(var + eps)) * scale + shift).
#include <cmath>

#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {

namespace {

// The four parameters' memories and the folded weights, shared by the host step.
struct BatchNormFold {
  memory params[4];        // scale, shift, mean, var ([C], plain)
  memory w_plain, w, bias;
  std::optional<dnnl::reorder> to_w;   // w_plain -> the conv's weight layout, when it differs
  const void* done_for[4] = {nullptr, nullptr, nullptr, nullptr};
  bool always = false;
  float eps = 1e-5f;
  int64_t channels = 0;
};

void fold(BatchNormFold& f, dnnl::stream& stream) {
  const void* now[4];
  for (int i = 0; i < 4; ++i) now[i] = f.params[i].get_data_handle();
  if (!f.always && std::equal(now, now + 4, f.done_for)) return;
  const auto* scale = static_cast<const float*>(now[0]);
  const auto* shift = static_cast<const float*>(now[1]);
  const auto* mean = static_cast<const float*>(now[2]);
  const auto* var = static_cast<const float*>(now[3]);
  auto* w = static_cast<float*>(f.w_plain.get_data_handle());
  auto* b = static_cast<float*>(f.bias.get_data_handle());
  for (int64_t c = 0; c < f.channels; ++c) {
    w[c] = scale[c] / std::sqrt(var[c] + f.eps);
    b[c] = shift[c] - mean[c] * w[c];
  }
  if (f.to_w) {
    f.to_w->execute(stream, f.w_plain, f.w);
    stream.wait();
  }
  std::copy(now, now + 4, f.done_for);
}

}  // namespace

bool OnednnProgram::build_batchnorm_as_conv(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0];
  if (precision_ != Precision::f32 || fn_.value(x).type.shape.size() != 4) return false;
  const Dims xd = dims_of(x);
  const memory src = value_mem(x);
  std::optional<tag> layout = channel_blocks(src.get_desc(), xd);
  if (!layout && src.get_desc() == memory::desc(xd, f32, tag::nhwc)) layout = tag::nhwc;
  if (!layout) return false;
  const int64_t C = xd[1];
  const memory::desc xmd(xd, f32, *layout), wd = plain_md({C, 1, 1, 1, 1}), bd = plain_md({C});
  auto make_pd = [&](const dnnl::primitive_attr& a) {
    dnnl::convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, xmd, any_md(wd.dims()), bd, xmd,
                                      {1, 1}, {0, 0}, {0, 0});
    return dnnl::convolution_forward::primitive_desc(d, a, engine_);
  };
  try {
    if (std::string(make_pd(dnnl::primitive_attr()).impl_info_str()).rfind("ref", 0) == 0) return false;
  } catch (const dnnl::error&) {
    return false;
  }
  auto f = std::make_shared<BatchNormFold>();
  f->eps = static_cast<float>(attr_float(node.attrs, "epsilon", 1e-5));
  f->channels = C;
  for (int i = 0; i < 4; ++i) {
    const ValueId p = node.inputs[static_cast<size_t>(i) + 1];
    f->params[i] = plain_mem(p, {C});
    const Value& v = fn_.value(p);
    f->always = f->always || v.kind == ValueKind::Intermediate || varying_[static_cast<size_t>(p)];
  }
  f->w_plain = new_mem(wd);
  f->bias = new_mem(bd);
  finish_anchor(n, dnnl::primitive_attr(), make_pd, [&](const auto& pd) {
    f->w = pd.weights_desc() == wd ? f->w_plain : new_mem(pd.weights_desc());
    if (!(pd.weights_desc() == wd)) f->to_w = dnnl::reorder(f->w_plain, f->w);
    // Every memory listed as a source: the folded weights persist from run to run, so the memory
    // plan must never share them (a buffer moves only when its first step writes it).
    std::unordered_map<int, memory> uses;
    int k = 0;
    for (const memory& m : {f->params[0], f->params[1], f->params[2], f->params[3], f->w_plain, f->w, f->bias})
      uses[DNNL_ARG_MULTIPLE_SRC + k++] = m;
    steps_.push_back({{}, std::move(uses), [this, f] { fold(*f, stream_); }, "host:batchnorm_fold"});
    return std::unordered_map<int, memory>{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, f->w}, {DNNL_ARG_BIAS, f->bias}};
  });
  return true;
}

void OnednnProgram::build_batchnorm(size_t n) {
  const Node& node = fn_.nodes[n];
  if (attr_int(node.attrs, "training_mode", 0) != 0) unsupported(node, "training_mode");
  if (node.inputs.size() != 5) unsupported(node, "needs scale, bias, mean and var");
  if (build_batchnorm_as_conv(n)) return;
  const memory src = value_mem(node.inputs[0]);
  const int64_t C = fn_.value(node.inputs[0]).type.shape.at(1);
  const float eps = static_cast<float>(attr_float(node.attrs, "epsilon", 1e-5));
  const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  finish_anchor(n, dnnl::primitive_attr(), [&](const dnnl::primitive_attr& a) {
    dnnl::batch_normalization_forward::desc d(prop_kind::forward_inference, src.get_desc(), eps, flags);
    return dnnl::batch_normalization_forward::primitive_desc(d, a, engine_);
  }, [&](const auto&) {
    return std::unordered_map<int, memory>{{DNNL_ARG_SRC, src},
                                           {DNNL_ARG_SCALE, plain_mem(node.inputs[1], {C})},
                                           {DNNL_ARG_SHIFT, plain_mem(node.inputs[2], {C})},
                                           {DNNL_ARG_MEAN, plain_mem(node.inputs[3], {C})},
                                           {DNNL_ARG_VARIANCE, plain_mem(node.inputs[4], {C})}};
  });
}

}  // namespace tessera::onednn
