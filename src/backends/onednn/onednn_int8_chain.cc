// u8 values between int8 convolutions: which values stay u8, and their readers (onednn_int8_chain.h).
#include "backends/onednn/onednn_int8_chain.h"

#include <algorithm>

namespace tessera::onednn {

void OnednnProgram::find_int8_convs() {
  int8_conv_.assign(fn_.nodes.size(), 0);
  if (precision_ != Precision::int8) return;
  for (size_t n = 0; n < fn_.nodes.size(); ++n)
    if (fn_.nodes[n].op == "Conv" && !absorbed_[n] && !int8_at_.count(n) && !scale_fold_.count(n))
      int8_conv_[n] = build_conv_int8(n, true) ? 1 : 0;
}

// fuse_chain's walk over the graph alone: eltwise ops of the chain's value, and one residual Add
// whose other operand is ready (a function input, a constant, or computed before the anchor).
ValueId OnednnProgram::predicted_chain_end(size_t n, ValueId* residual) const {
  ValueId v = fn_.nodes[n].outputs[0];
  const Shape shape = fn_.value(v).type.shape;
  bool summed = false;
  if (residual) *residual = kNoValue;
  while (!frame_.is_function_output(v) && !unary_of_.count(v) && consumers_[static_cast<size_t>(v)].size() == 1) {
    const Node& c = fn_.node(consumers_[static_cast<size_t>(v)][0]);
    if (c.outputs.size() != 1 || fn_.value(c.outputs[0]).type.shape != shape) break;
    if (eltwise_ops(fn_, c)) {
      if (eltwise_source(fn_, c) != v) break;
      v = c.outputs[0];
      continue;
    }
    if (c.op != "Add" || summed || c.inputs.size() != 2 || c.inputs[0] == c.inputs[1]) break;
    const ValueId other = c.inputs[c.inputs[0] == v ? 1 : 0];
    const Value& o = fn_.value(other);
    if (o.type.shape != shape || (o.kind == ValueKind::Intermediate && static_cast<size_t>(o.producer) >= n)) break;
    summed = true;
    if (residual) *residual = other;
    v = c.outputs[0];
  }
  return v;
}

bool OnednnProgram::keeps_u8(ValueId v) const {
  if (precision_ != Precision::int8 || v == kNoValue || is_boundary(v)) return false;
  const Value& val = fn_.value(v);
  if (val.kind != ValueKind::Intermediate || val.type.dtype != DType::f32 || val.type.shape.size() != 4 || !act_quant(val)) return false;
  if (alias_of_[static_cast<size_t>(v)] != kNoValue || region_of_[static_cast<size_t>(v)].root != kNoValue) return false;
  int convs = 0;
  for (NodeId c : consumers_[static_cast<size_t>(v)]) {
    const Node& node = fn_.node(c);
    const auto uses = std::count(node.inputs.begin(), node.inputs.end(), v);
    if (node.op == "Conv" && int8_conv_[static_cast<size_t>(c)] && node.inputs[0] == v && uses == 1) ++convs;
    else if (node.op != "Add" || node.inputs.size() != 2 || uses != 1) return false;
  }
  return convs > 0;
}

memory OnednnProgram::int8_source(ValueId x, const memory::desc& want, float scale, int32_t zero_point) {
  const auto it = u8_of_.find(x);
  if (it == u8_of_.end()) return shared_quantize(x, value_mem(x), want, scale, zero_point);
  // Kept in u8 at this same scale and zero point (both from x's range): read as it is, or
  // reordered (u8 to u8) into the layout this conv wants.
  if (it->second.mem.get_desc() == want) return it->second.mem;
  memory to = new_mem(want);
  add_reorder(it->second.mem, to);
  return to;
}

// An f32 value read by several int8 anchors (a block input read by its 3x3 conv and its 1x1
// projection; a LayerNorm's output read by the Q, K and V matmuls) is quantized once: its scale
// and zero point come from its range, the same for every reader. Another view or layout of it
// is quantized anew (and becomes the one shared).
memory OnednnProgram::shared_quantize(ValueId x, const memory& from, const memory::desc& want, float scale, int32_t zero_point) {
  const auto q = quantized_src_.find(x);
  if (q != quantized_src_.end() && q->second.from == from.get_desc() && q->second.to.get_desc() == want) return q->second.to;
  memory to = quantize_source(from, want, scale, zero_point);
  quantized_src_[x] = QuantizedSource{from.get_desc(), to};
  return to;
}

memory OnednnProgram::dequantized(ValueId v) {
  const memory::desc md = u8_of_.at(v).mem.get_desc();
  const std::optional<Dims> strides = strides_of(md);
  const memory::desc f32_md = strides ? memory::desc(md.dims(), memory::data_type::f32, *strides) : plain_md(md.dims());
  memory to = new_mem(f32_md);
  add_dequantize(v, to);
  return to;
}

void OnednnProgram::add_dequantize(ValueId v, const memory& to) {
  const U8Value& k = u8_of_.at(v);
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {k.scale});
  if (k.zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {k.zero_point});
  const dnnl::reorder::primitive_desc pd(engine_, k.mem.get_desc(), engine_, to.get_desc(), attr);
  steps_.push_back({dnnl::reorder(pd), {{DNNL_ARG_FROM, k.mem}, {DNNL_ARG_TO, to}}, {}});
}

// residual_in_place's rule for a kept residual: in the dst's layout, and the fused Add its only
// reader after anchor n.
bool OnednnProgram::u8_in_place(size_t n, ValueId residual, const memory::desc& dst) const {
  const auto it = u8_of_.find(residual);
  if (it == u8_of_.end() || !(it->second.mem.get_desc() == dst)) return false;
  int later = 0;
  for (NodeId c : consumers_[static_cast<size_t>(residual)]) {
    if (static_cast<size_t>(c) > n) ++later;
    else if (static_cast<size_t>(c) == n || is_layout_op(fn_.node(c).op)) return false;
  }
  return later == 1;
}

std::vector<std::string> OnednnProgram::u8_values() const {
  std::vector<std::string> out;
  for (const auto& [v, k] : u8_of_) out.push_back(fn_.value(v).name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tessera::onednn
