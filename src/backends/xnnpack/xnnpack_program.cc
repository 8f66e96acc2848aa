// XnnpackProgram: dispatch and the tensors of the subgraph (see xnnpack_program.h).
#include "backends/xnnpack/xnnpack_program.h"

#include <cstring>
#include <limits>

#include "backends/kernel.h"

namespace tessera::xnnpack {

XnnpackProgram::XnnpackProgram(const Graph& fn, const BoundaryLayouts& layouts)
    : fn_(fn), frame_(fn), layout_(fn.values.size(), Layout::plain), varying_(fn.values.size(), 0), consumers_(fn.consumers()),
      absorbed_(fn.nodes.size(), 0) {
  for (size_t i = 0; i < layouts.inputs.size() && i < fn.inputs.size(); ++i) layout_[static_cast<size_t>(fn.inputs[i])] = layouts.inputs[i];
  for (size_t i = 0; i < fn.inputs.size(); ++i) varying_[static_cast<size_t>(fn.inputs[i])] = layouts.varies(i) ? 1 : 0;
  for (size_t i = 0; i < layouts.outputs.size() && i < fn.outputs.size(); ++i) {
    Layout& l = layout_[static_cast<size_t>(fn.outputs[i])];
    if (l != Layout::plain && layouts.outputs[i] != l)
      throw KernelUnsupported("xnnpack: '" + fn.value(fn.outputs[i]).name + "' is an input and an output in two layouts");
    l = layouts.outputs[i];
  }
  for (const Value& v : fn.values)
    if (v.type.dtype != DType::f32 && !(v.is_constant() && v.data))
      throw KernelUnsupported("xnnpack: value '" + v.name + "' is " + to_string(v.type) + ", only f32 is supported");
    else if (v.type.numel() == 0 && !v.is_constant())   // XNNPACK asserts on null buffers of empty tensors
      throw KernelUnsupported("xnnpack: value '" + v.name + "' is empty (" + to_string(v.type) + ")");
  build();
  // XNNPACK packs static tensors (weights) when the runtime is made: one made from an input whose
  // contents change between runs (a MatMul's second operand computed from the model's inputs)
  // makes the runtime anew on every run.
  for (const TensorDef& d : defs_)
    for (ValueId v : d.sources) varying_weights_ = varying_weights_ || varying_[static_cast<size_t>(v)];
  instantiate(static_sources(), nullptr);   // validation: XNNPACK accepts every node (zero weights)
}

void XnnpackProgram::unsupported(const Node& node, const std::string& why) const {
  throw KernelUnsupported("xnnpack: node '" + node.name + "' (" + node.op + "): " + why);
}

void XnnpackProgram::require_unused_extra_outputs(const Node& node) const {
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    const ValueId v = node.outputs[i];
    if (v != kNoValue && (!consumers_[static_cast<size_t>(v)].empty() || fn_.is_output(v)))
      unsupported(node, "optional output " + std::to_string(i) + " is used");
  }
}

void XnnpackProgram::build() {
  for (size_t n = 0; n < fn_.nodes.size(); ++n) {
    if (absorbed_[n]) continue;
    const Node& node = fn_.nodes[n];
    if (!node.domain.empty() && node.domain != "ai.onnx") unsupported(node, "not in the ONNX domain");
    require_unused_extra_outputs(node);
    const std::string& op = node.op;
    if (op == "Conv") build_conv(node);
    else if (op == "ConvTranspose") build_conv_transpose(node);
    else if (op == "Gemm" || op == "MatMul") build_fully_connected(node);
    else if (op == "MaxPool" || op == "AveragePool") build_pool(node);
    else if (op == "GlobalAveragePool") build_global_pool(node);
    else if (op == "Resize") build_resize(node);
    else if (op == "Pad") build_pad(node);
    else if (op == "DepthToSpace") build_depth_to_space(node);
    else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min") build_binary(node);
    else if (op == "Softmax") build_softmax(node);
    else if (op == "BatchNormalization") build_batch_norm(node);
    else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") build_reshape(node);
    else build_unary(node);   // refuses what it does not know
  }
  for (ValueId v : fn_.outputs)
    if (!def_of_.count({v, View::Native})) throw KernelUnsupported("xnnpack: output '" + fn_.value(v).name + "' not written");
}

size_t XnnpackProgram::read(const Node& reader, ValueId v, View view) {
  if (view == View::Padded4 && shape(v).size() >= 4) view = View::Native;
  if (auto it = def_of_.find({v, view}); it != def_of_.end()) return it->second;
  const Value& val = fn_.value(v);
  const Shape s = val.type.shape;
  if (s.size() > XNN_MAX_TENSOR_DIMS) unsupported(reader, "rank " + std::to_string(s.size()) + " > " + std::to_string(XNN_MAX_TENSOR_DIMS));
  TensorDef def;
  def.dims = physical_dims(s, view);
  if (val.kind == ValueKind::Input) {
    def.external_id = externals_++;
    def.flags = XNN_VALUE_FLAG_EXTERNAL_INPUT;
    const size_t n = static_cast<size_t>(val.type.numel());
    inputs_.push_back({v, view, def.external_id, std::vector<float>(n + XNN_EXTRA_BYTES / sizeof(float))});
  } else if (val.is_constant()) {
    if (val.type.dtype != DType::f32) unsupported(reader, "constant '" + val.name + "' is not f32");
    def.sources = {v};
    def.static_elems = static_cast<size_t>(val.type.numel());
    def.fill = [s, view](const float* const* src, float* dst) { to_view(src[0], dst, s, view); };
  } else {
    auto native = def_of_.find({v, View::Native});
    if (native == def_of_.end()) throw KernelError("xnnpack: value '" + val.name + "' read before it is written");
    if (!plain_order(s, View::Native) || !plain_order(s, view))
      unsupported(reader, "operand '" + val.name + "' would need a transpose inside the subgraph (NHWC vs NCHW order)");
    const size_t from = native->second, to = defs_.size();
    defs_.push_back(def);
    def_of_[{v, view}] = to;
    const std::vector<size_t> dims = def.dims;
    add(reader, [from, to, dims](xnn_subgraph_t g, const std::vector<uint32_t>& ids) {
      return xnn_define_static_reshape(g, dims.size(), dims.data(), ids[from], ids[to], 0);
    });
    return to;
  }
  defs_.push_back(std::move(def));
  def_of_[{v, view}] = defs_.size() - 1;
  return defs_.size() - 1;
}

size_t XnnpackProgram::write(const Node& writer, ValueId v, View view) {
  const Value& val = fn_.value(v);
  if (view == View::Plain && !plain_order(val.type.shape, View::Native)) {
    if (!frame_.is_function_output(v) || !consumers_[static_cast<size_t>(v)].empty())
      unsupported(writer, "its NCHW result is read inside the function, which keeps rank 4 NHWC (needs a transpose)");
  } else {
    view = View::Native;
  }
  if (def_of_.count({v, View::Native})) throw KernelError("xnnpack: value '" + val.name + "' written twice");
  if (val.type.shape.size() > XNN_MAX_TENSOR_DIMS)
    throw KernelUnsupported("xnnpack: value '" + val.name + "' has rank > " + std::to_string(XNN_MAX_TENSOR_DIMS));
  TensorDef def;
  def.dims = physical_dims(val.type.shape, view);
  if (frame_.is_function_output(v)) {
    def.external_id = externals_++;
    def.flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
    const bool in_place = layout_[static_cast<size_t>(v)] == Layout::nhwc ? view == View::Native
                                                                           : plain_order(val.type.shape, view);
    outputs_.push_back({v, def.external_id, in_place,
                        std::vector<float>(in_place ? 0 : static_cast<size_t>(val.type.numel()))});
  }
  defs_.push_back(std::move(def));
  def_of_[{v, View::Native}] = defs_.size() - 1;
  return defs_.size() - 1;
}

size_t XnnpackProgram::weight(const Node& reader, ValueId v, std::vector<size_t> dims, size_t elems,
                              std::function<void(const float*, float*)> fill) {
  return weight(reader, std::vector<ValueId>{v}, std::move(dims), elems,
                [fill = std::move(fill)](const float* const* src, float* dst) { fill(src[0], dst); });
}

size_t XnnpackProgram::weight(const Node& reader, const std::vector<ValueId>& vs, std::vector<size_t> dims, size_t elems,
                              std::function<void(const float* const*, float*)> fill) {
  for (ValueId v : vs) {
    const Value& val = fn_.value(v);
    if (val.kind == ValueKind::Intermediate) unsupported(reader, "'" + val.name + "' must be a weight (an input or a constant)");
    if (val.type.dtype != DType::f32) unsupported(reader, "weight '" + val.name + "' is not f32");
  }
  TensorDef def;
  def.dims = std::move(dims);
  def.sources = vs;
  def.static_elems = elems;
  def.fill = std::move(fill);
  defs_.push_back(std::move(def));
  return defs_.size() - 1;
}

size_t XnnpackProgram::temporary(std::vector<size_t> dims) {
  TensorDef def;
  def.dims = std::move(dims);
  defs_.push_back(std::move(def));
  return defs_.size() - 1;
}

Clamp XnnpackProgram::fuse_clamps(ValueId v) {
  Clamp c{-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), v};
  while (!frame_.is_function_output(c.out)) {
    const auto& cons = consumers_[static_cast<size_t>(c.out)];
    if (cons.size() != 1) break;
    const Node& next = fn_.node(cons[0]);
    if (next.inputs.empty() || next.inputs[0] != c.out) break;
    bool other_use = false;
    for (size_t i = 1; i < next.inputs.size(); ++i) other_use |= next.inputs[i] == c.out;
    const auto bounds = other_use ? std::nullopt : clamp_bounds(fn_, next);
    if (!bounds) break;
    const float lo = std::max(c.lo, bounds->first), hi = std::min(c.hi, bounds->second);
    if (!(lo < hi)) break;   // disjoint bounds: a constant, left to a node of its own
    c.lo = lo;
    c.hi = hi;
    c.out = next.outputs[0];
    absorbed_[static_cast<size_t>(cons[0])] = 1;
  }
  return c;
}

void XnnpackProgram::add(const Node& node, DefineFn define) {
  nodes_.push_back({"node '" + node.name + "' (" + node.op + ")", std::move(define)});
}

std::optional<std::vector<double>> XnnpackProgram::constant_values(ValueId v) const {
  if (v == kNoValue) return std::nullopt;
  const Value& val = fn_.value(v);
  if (!val.is_constant() || !val.data) return std::nullopt;
  const size_t n = static_cast<size_t>(val.type.numel());
  std::vector<double> out(n);
  const uint8_t* p = val.data->data();
  for (size_t i = 0; i < n; ++i) {
    switch (val.type.dtype) {
      case DType::f32: { float f; std::memcpy(&f, p + 4 * i, 4); out[i] = f; break; }
      case DType::f64: { double d; std::memcpy(&d, p + 8 * i, 8); out[i] = d; break; }
      case DType::i64: { int64_t x; std::memcpy(&x, p + 8 * i, 8); out[i] = static_cast<double>(x); break; }
      case DType::i32: { int32_t x; std::memcpy(&x, p + 4 * i, 4); out[i] = x; break; }
      default: return std::nullopt;
    }
  }
  return out;
}

}  // namespace tessera::xnnpack
