// OnednnProgram: dispatch, memories and layouts, run (see onednn_compiler.h).
#include "backends/onednn/onednn_program.h"

#include <oneapi/dnnl/dnnl_debug.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "backends/kernel.h"

namespace tessera::onednn {

memory::desc plain_md(const Dims& dims, memory::data_type t) {
  const Dims d = dims.empty() ? Dims{1} : dims;
  Dims strides(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) strides[i - 1] = strides[i] * d[i];
  return memory::desc(d, t, strides);
}

memory::data_type dnnl_type(DType t) {
  switch (t) {
    case DType::f32: return memory::data_type::f32;
    case DType::u8: return memory::data_type::u8;
    case DType::i8: return memory::data_type::s8;
    case DType::i32: return memory::data_type::s32;
    default: throw KernelUnsupported("onednn: no oneDNN type for " + std::string(dtype_name(t)));
  }
}

namespace {

// A function that only moves data (a layout conversion the executor runs between two functions,
// a lone Transpose) is built and run on the calling thread alone. Waking the OpenMP team for a
// copy saves little, and the team then spins for milliseconds (libgomp's default spin count) on
// the cores the next function's own pool needs: mobilenet_v2 as one XNNPACK function behind the
// graph input's NCHW -> NHWC reorder ran 8.0 ms at 2 threads, 3.9-4.0 ms with the reorder on one thread.
class OneThreadIf {
 public:
  explicit OneThreadIf(bool on) : threads_(on ? omp_get_max_threads() : 1) {
    if (threads_ > 1) omp_set_num_threads(1);
  }
  ~OneThreadIf() {
    if (threads_ > 1) omp_set_num_threads(threads_);
  }
  OneThreadIf(const OneThreadIf&) = delete;
  OneThreadIf& operator=(const OneThreadIf&) = delete;

 private:
  int threads_;
};

}  // namespace

OnednnProgram::OnednnProgram(const Graph& fn, dnnl::engine engine, Precision precision, const BoundaryLayouts& layouts)
    : fn_(fn), precision_(precision), engine_(engine), stream_(engine_), frame_(fn), consumers_(fn.consumers()), mem_(fn.values.size()), plain_of_(fn.values.size()), converted_(fn.values.size()),
      layout_(fn.values.size(), Layout::plain), varying_(fn.values.size(), 0), alias_of_(fn.values.size(), kNoValue),
      absorbed_(fn.nodes.size(), 0) {
  for (size_t i = 0; i < layouts.inputs.size() && i < fn.inputs.size(); ++i) layout_[static_cast<size_t>(fn.inputs[i])] = layouts.inputs[i];
  for (size_t i = 0; i < fn.inputs.size(); ++i) varying_[static_cast<size_t>(fn.inputs[i])] = layouts.varies(i) ? 1 : 0;
  for (size_t i = 0; i < layouts.outputs.size() && i < fn.outputs.size(); ++i) {
    Layout& l = layout_[static_cast<size_t>(fn.outputs[i])];
    if (l != Layout::plain && layouts.outputs[i] != l)   // an input returned as an output in another order
      throw KernelUnsupported("onednn: '" + fn.value(fn.outputs[i]).name + "' is an input and an output in two layouts");
    l = layouts.outputs[i];
  }
  // Integer tensors only where a quantized op reads or writes them (onednn_int8.cc); every other
  // builder computes in f32.
  for (const Node& node : fn.nodes) {
    if (is_quantized_op(node.op)) continue;
    for (const auto* list : {&node.inputs, &node.outputs})
      for (ValueId id : *list) {
        if (id == kNoValue) continue;
        const Value& v = fn.value(id);
        if (v.type.dtype != DType::f32 && !(v.is_constant() && v.data))
          throw KernelUnsupported("onednn: value '" + v.name + "' is " + to_string(v.type) + ", only f32 is supported");
      }
  }
  for (ValueId id : fn.inputs)
    if (DType t = fn.value(id).type.dtype; t != DType::f32 && t != DType::u8 && t != DType::i8 && t != DType::i32)
      throw KernelUnsupported("onednn: input '" + fn.value(id).name + "' is " + to_string(fn.value(id).type));
  moves_only_ = std::all_of(fn.nodes.begin(), fn.nodes.end(), [](const Node& n) { return is_layout_op(n.op); });
  {
    OneThreadIf one(moves_only_);   // oneDNN fixes a primitive's thread count when it creates it
    build();
  }
  plan_memory();
  pool_constants();
  if (precision_ == Precision::bf16 && !computes_in_bf16_)
    throw KernelUnsupported("onednn_bf16: no convolution or matmul in the function, nothing would run in bf16 (onednn runs it)");
  if (precision_ == Precision::int8 && !computes_in_int8_)
    throw KernelUnsupported("onednn_int8: no convolution or matmul with a calibrated source range that oneDNN runs in int8 (onednn runs it)");
}

memory::data_type OnednnProgram::compute_type() const {
  return precision_ == Precision::bf16 ? memory::data_type::bf16 : memory::data_type::f32;
}

memory OnednnProgram::compute_src(ValueId v, const memory::desc& user_md, const memory::desc& want) {
  memory m = view_mem(v, user_md);
  if (want == user_md) return m;
  memory to = new_mem(want);
  add_reorder(m, to);
  return to;
}

void OnednnProgram::unsupported(const Node& node, const std::string& why) const {
  throw KernelUnsupported("onednn: node '" + node.name + "' (" + node.op + "): " + why);
}

void OnednnProgram::build() {
  find_groups();
  find_shuffles();
  plan_concat_regions();
  find_int8();
  find_scale_folds();
  find_int8_convs();
  for (size_t n = 0; n < fn_.nodes.size(); ++n) {
    if (absorbed_[n]) continue;
    if (auto it = layer_norm_at_.find(n); it != layer_norm_at_.end()) {
      build_layer_norm_group(n, it->second);
      continue;
    }
    if (auto it = unary_at_.find(n); it != unary_at_.end()) {
      build_unary_group(n, it->second);
      continue;
    }
    if (auto it = shuffle_at_.find(n); it != shuffle_at_.end()) {
      build_shuffle(n, it->second);
      continue;
    }
    if (auto it = int8_at_.find(n); it != int8_at_.end()) {
      build_int8(n, it->second);
      continue;
    }
    if (auto it = qadd_at_.find(n); it != qadd_at_.end()) {
      build_qadd(n, it->second);
      continue;
    }
    const Node& node = fn_.nodes[n];
    for (size_t i = 1; i < node.outputs.size() && node.op != "Split" && node.op != "DynamicQuantizeLinear"; ++i) {
      const ValueId v = node.outputs[i];
      if (v != kNoValue && (!consumers_[static_cast<size_t>(v)].empty() || fn_.is_output(v)))
        unsupported(node, "optional output " + std::to_string(i) + " is used");
    }
    const std::string& op = node.op;
    if (precision_ == Precision::int8 && ((op == "Conv" && build_conv_int8(n)) || ((op == "MatMul" || op == "Gemm") && build_matmul_int8(n))))
      continue;
    if (op == "Conv") build_conv(n, false);
    else if (op == "ConvTranspose") build_conv(n, true);
    else if (op == "MatMul" || op == "Gemm") build_matmul(n);
    else if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool") build_pool(n);
    else if (op == "BatchNormalization") build_batchnorm(n);
    else if (op == "Softmax" || op == "LogSoftmax") build_softmax(n, op == "LogSoftmax");
    else if (op == "LayerNormalization") build_layernorm(n);
    else if (op == "QuantizeLinear" || op == "DequantizeLinear") build_quantize(n);
    else if (op == "ConvInteger" || op == "MatMulInteger") build_integer(n);
    else if (op == "Cast") build_cast(n);
    else if (op == "DynamicQuantizeLinear") build_dynamic_quantize(n);
    else if (op == "Resize") build_resize(n);
    else if (is_layout_op(op)) build_layout_op(n);
    else if (auto ops = eltwise_ops(fn_, node)) build_eltwise(n, *ops);
    else if (auto alg = binary_alg(op)) build_binary(n, *alg);
    else unsupported(node, "oneDNN has no primitive for it here");
  }
  for (ValueId v : fn_.outputs)
    if (!mem_[static_cast<size_t>(v)]) throw KernelUnsupported("onednn: output '" + fn_.value(v).name + "' not written");
}

bool OnednnProgram::is_boundary(ValueId v) const {
  const Value& val = fn_.value(v);
  return val.kind == ValueKind::Input || frame_.is_function_output(v);
}

memory::desc OnednnProgram::boundary_md(ValueId v) const {
  if (plain_boundary(v)) return plain_md(dims_of(v), dnnl_type(fn_.value(v).type.dtype));
  return memory::desc(dims_of(v), memory::data_type::f32, memory::format_tag::nhwc);
}

Dims OnednnProgram::dims_of(ValueId v) const {
  const Shape& s = fn_.value(v).type.shape;
  return Dims(s.begin(), s.end());
}

memory OnednnProgram::new_mem(const memory::desc& md) {
  owned_bytes_ += md.get_size();
  owned_.emplace_back(md, engine_);
  return owned_.back();
}

memory OnednnProgram::value_mem(ValueId v) {
  auto& slot = mem_[static_cast<size_t>(v)];
  if (slot) return *slot;
  if (u8_of_.count(v)) return *(slot = dequantized(v));   // kept in u8: an f32 copy for an f32 reader
  const Value& val = fn_.value(v);
  if (val.kind == ValueKind::Intermediate && !frame_.is_function_output(v))
    throw KernelError("onednn: value '" + val.name + "' read before it is written");
  if (val.is_constant()) {
    slot = memory(plain_md(dims_of(v), dnnl_type(val.type.dtype)), engine_, const_cast<void*>(frame_.cview(v).data));
  } else {
    slot = memory(boundary_md(v), engine_, DNNL_MEMORY_NONE);
    bindings_.emplace_back(*slot, v);
  }
  return *slot;
}

memory OnednnProgram::plain_base(ValueId v) {
  memory m = value_mem(v);
  const memory::desc plain = plain_md(dims_of(v), dnnl_type(fn_.value(v).type.dtype));
  if (m.get_desc() == plain) return m;
  // blocked -> plain, once per value. The plain copy sits beside the value's own memory, which
  // stays what value_mem gives: a later convolution or binary keeps reading the blocked or nhwc
  // original instead of reordering the copy back (a layout round trip per use, 2-3x a coalesced
  // function's time on PaddleOCR det).
  auto& copy = plain_of_[static_cast<size_t>(v)];
  if (!copy) {
    copy = new_mem(plain);
    add_reorder(m, *copy);
  }
  return *copy;
}

memory OnednnProgram::view_mem(ValueId v, const memory::desc& md) {
  // A view of a boundary value (Reshape of an input) has no address until run: bind it too.
  if (const ValueId root = alias_of_[static_cast<size_t>(v)]; root != kNoValue) return view_mem(root, md);
  memory base = plain_base(v);
  if (base.get_desc() == md) return base;
  if (md.get_size() != base.get_desc().get_size())
    throw KernelError("onednn: view of '" + fn_.value(v).name + "' with another size");
  const Value& val = fn_.value(v);
  if (val.is_constant()) return memory(md, engine_, const_cast<void*>(frame_.cview(v).data));
  if (is_boundary(v) && plain_boundary(v)) {
    memory view(md, engine_, DNNL_MEMORY_NONE);
    bindings_.emplace_back(view, v);
    return view;
  }
  return memory(md, engine_, base.get_data_handle());
}

memory OnednnProgram::weights_mem(ValueId v, const memory::desc& user_md, const memory::desc& md) {
  if (user_md == md) return view_mem(v, md);
  memory to = new_mem(md);
  const Value& val = fn_.value(v);
  if (val.kind == ValueKind::Intermediate || !plain_boundary(v)) {
    add_reorder(view_mem(v, user_md), to);
    return to;
  }
  memory from(user_md, engine_, val.is_constant() ? const_cast<void*>(frame_.cview(v).data) : DNNL_MEMORY_NONE);
  CachedReorder c{v, from, to, dnnl::reorder(from, to), nullptr};
  if (val.is_constant()) {   // constant weights: reordered now, never again
    c.prim.execute(stream_, c.from, c.to);
    stream_.wait();
    c.done_for = frame_.cview(v).data;
  }
  cached_.push_back(std::move(c));
  return to;
}

memory OnednnProgram::as_layout(ValueId v, const memory::desc& md) {
  memory m = value_mem(v);
  if (m.get_desc() == md) return m;
  if (md == plain_md(md.dims(), m.get_desc().data_type())) return plain_mem(v, md.dims());
  std::vector<memory>& copies = converted_[static_cast<size_t>(v)];
  for (const memory& c : copies)
    if (c.get_desc() == md) return c;
  memory to = new_mem(md);
  add_reorder(m.get_desc().dims() == md.dims() ? m : plain_mem(v, md.dims()), to);
  copies.push_back(to);
  return to;
}

memory OnednnProgram::dst_mem(ValueId v, const memory::desc& md) {
  const memory::data_type t = md.data_type();
  const bool plain_layout = md == plain_md(md.dims(), t);
  memory m;
  if (frame_.is_function_output(v)) {
    memory user = value_mem(v);
    if (md == user.get_desc()) return user;
    if (plain_boundary(v) && plain_layout && md.get_size() == user.get_desc().get_size()) {
      m = memory(md, engine_, DNNL_MEMORY_NONE);
      bindings_.emplace_back(m, v);
      return m;
    }
    m = new_mem(md);
    memory from = m;
    if (!plain_boundary(v) && md.dims() != dims_of(v)) {
      // Written through other dims (a view): first plain with those dims, then seen as v's own.
      memory plain = plain_layout ? m : new_mem(plain_md(md.dims(), t));
      if (!plain_layout) final_reorders_.push_back({dnnl::reorder(m, plain), {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, plain}}});
      from = memory(plain_md(dims_of(v), t), engine_, plain.get_data_handle());
    }
    memory user_view(plain_boundary(v) ? plain_md(md.dims(), dnnl_type(fn_.value(v).type.dtype)) : boundary_md(v), engine_, DNNL_MEMORY_NONE);
    bindings_.emplace_back(user_view, v);
    final_reorders_.push_back({dnnl::reorder(from, user_view), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, user_view}}});
    // Read later inside the function with its own dims (a Slice after a Transpose + Reshape
    // absorbed into it): the plain bytes under v's dims, written by the step itself.
    mem_[static_cast<size_t>(v)] = plain_layout ? from : m;
    return m;
  }
  if (const std::optional<memory> slab = region_mem(v, md)) {   // its slab of a Concat (onednn_concat_regions.cc)
    mem_[static_cast<size_t>(v)] = *slab;
    return *slab;
  }
  m = new_mem(md);
  mem_[static_cast<size_t>(v)] =
      plain_layout && md.dims() != dims_of(v) ? memory(plain_md(dims_of(v), t), engine_, m.get_data_handle()) : m;
  return m;
}

// A residual Add fused as a sum post-op needs the anchor's dst filled with the residual first: a
// copy per block (ResNeXt: 0.01-0.05 ms each, 16 per run). The residual's own buffer serves as
// the dst when nothing reads the residual afterwards: it is an internal value (no function input
// or output, no view of one), in the dst's layout, every other reader is a step before this one
// and none is a layout op (whose output could be a view of the buffer read later), and the only
// reader after the anchor is the fused Add itself.
bool OnednnProgram::residual_in_place(size_t n, ValueId residual, ValueId out, const memory::desc& dst) const {
  if (is_boundary(residual) || is_boundary(out) || alias_of_[static_cast<size_t>(residual)] != kNoValue) return false;
  if (region_of_[static_cast<size_t>(residual)].root != kNoValue) return false;   // a Concat may read its slab later
  const std::optional<memory>& m = mem_[static_cast<size_t>(residual)];
  // In the dst's layout; or both plain with the same bytes (a MatMul's rows as a rank-2 GEMM).
  const auto plain = [](const memory::desc& md) { return md == plain_md(md.dims(), md.data_type()); };
  if (!m || m->get_data_handle() == nullptr) return false;
  if (!(m->get_desc() == dst) && !(plain(m->get_desc()) && plain(dst) && m->get_desc().get_size() == dst.get_size())) return false;
  int later = 0;
  for (NodeId c : consumers_[static_cast<size_t>(residual)]) {
    if (static_cast<size_t>(c) > n) ++later;
    else if (static_cast<size_t>(c) == n || is_layout_op(fn_.node(c).op)) return false;
  }
  return later == 1;
}

void OnednnProgram::add_reorder(const memory& from, const memory& to) {
  steps_.push_back({dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}});
}

// Data movement only: on the calling thread alone (OneThreadIf, above).
void OnednnProgram::run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) {
  OneThreadIf one(moves_only_);
  run_steps(inputs, outputs);
}

std::vector<std::string> OnednnProgram::implementations() const {
  std::vector<std::string> out;
  for (const Step& step : steps_) {
    if (step.host) {
      out.push_back(step.host_name);
      continue;
    }
    const char* info = nullptr;
    if (dnnl_primitive_desc_query(step.prim.get_primitive_desc(), dnnl_query_impl_info_str, 0, &info) == dnnl_success && info)
      out.push_back(std::string(dnnl_prim_kind2str(static_cast<dnnl_primitive_kind_t>(step.prim.get_kind()))) + ":" + info);
  }
  return out;
}

std::vector<Dims> OnednnProgram::dst_dims() const {
  std::vector<Dims> out;
  for (const Step& step : steps_) {
    if (step.host) {
      out.emplace_back();
      continue;
    }
    const dnnl_memory_desc_t* md = dnnl_primitive_desc_query_md(step.prim.get_primitive_desc(), dnnl_query_dst_md, 0);
    out.push_back(md ? Dims(md->dims, md->dims + md->ndims) : Dims{});
  }
  return out;
}

void OnednnProgram::run_steps(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) {
  frame_.bind(inputs, outputs);
  for (auto& [m, v] : bindings_) m.set_data_handle(frame_.data(v));
  for (CachedReorder& c : cached_) {
    const void* src = frame_.data(c.value);
    if (c.done_for == src && !varying_[static_cast<size_t>(c.value)]) continue;   // same weights: reordered already
    if (!fn_.value(c.value).is_constant()) c.from.set_data_handle(const_cast<void*>(src));
    c.prim.execute(stream_, c.from, c.to);
    c.done_for = src;
  }
  for (Step& s : steps_) {
    if (s.host) s.host();
    else s.prim.execute(stream_, s.args);
  }
  for (Step& s : final_reorders_) s.prim.execute(stream_, s.args);
  stream_.wait();
}

}  // namespace tessera::onednn
