// OnednnProgram: decomposed layer norm, erf-GELU, SiLU and HardSwish groups (onednn_patterns.h) as one
// primitive each. A GELU, SiLU or HardSwish that follows an anchor is a post-op of that anchor instead
// (fuse_chain); only one with no anchor before it inside the function becomes an eltwise
// primitive here.
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {

void OnednnProgram::absorb(const std::vector<NodeId>& nodes) {
  for (NodeId id : nodes) absorbed_[static_cast<size_t>(id)] = 1;
}

void OnednnProgram::find_groups() {
  for (size_t n = 0; n < fn_.nodes.size(); ++n) {
    if (fn_.nodes[n].op != "ReduceMean" && fn_.nodes[n].op != "GlobalAveragePool") continue;
    if (auto m = match_layer_norm(fn_, consumers_, static_cast<NodeId>(n)))
      layer_norm_at_.emplace(static_cast<size_t>(m->nodes.front()), std::move(*m));
  }
  for (size_t v = 0; v < fn_.values.size(); ++v) {
    if (consumers_[v].size() != 2) continue;
    auto m = match_gelu(fn_, consumers_, static_cast<ValueId>(v));
    if (!m) m = match_swish(fn_, consumers_, static_cast<ValueId>(v));
    if (!m) m = match_hardswish(fn_, consumers_, static_cast<ValueId>(v));
    if (m) {
      unary_at_.emplace(static_cast<size_t>(m->nodes.front()), *m);
      unary_of_.emplace(static_cast<ValueId>(v), std::move(*m));
    }
  }
}

void OnednnProgram::build_layer_norm_group(size_t n, const LayerNormMatch& m) {
  absorb(m.nodes);
  const Shape& xs = fn_.value(m.x).type.shape;
  const int64_t inner = xs.back(), outer = fn_.value(m.x).type.numel() / inner;
  auto flags = dnnl::normalization_flags::none;
  if (m.gamma != kNoValue) flags = flags | dnnl::normalization_flags::use_scale;
  if (m.beta != kNoValue) flags = flags | dnnl::normalization_flags::use_shift;
  const memory src = plain_mem(m.x, {outer, inner});
  finish_anchor(n, dnnl::primitive_attr(), [&](const dnnl::primitive_attr& a) {
    dnnl::layer_normalization_forward::desc d(prop_kind::forward_inference, src.get_desc(), m.eps, flags);
    return dnnl::layer_normalization_forward::primitive_desc(d, a, engine_);
  }, [&](const auto& pd) {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_MEAN, new_mem(pd.mean_desc())},
                                         {DNNL_ARG_VARIANCE, new_mem(pd.variance_desc())}};
    if (m.gamma != kNoValue) args[DNNL_ARG_SCALE] = plain_mem(m.gamma, {inner});
    if (m.beta != kNoValue) args[DNNL_ARG_SHIFT] = plain_mem(m.beta, {inner});
    return args;
  }, m.out);
}

void OnednnProgram::build_unary_group(size_t n, const UnaryMatch& m) {
  absorb(m.nodes);
  const memory src = value_mem(m.x);
  const EltwiseOp e = unary_eltwise(m);
  finish_anchor(n, dnnl::primitive_attr(), [&](const dnnl::primitive_attr& a) {
    dnnl::eltwise_forward::desc d(prop_kind::forward_inference, e.alg, src.get_desc(), e.alpha, e.beta);
    return dnnl::eltwise_forward::primitive_desc(d, a, engine_);
  }, [&](const auto&) { return std::unordered_map<int, memory>{{DNNL_ARG_SRC, src}}; }, m.out);
}

}  // namespace tessera::onednn
