// OnednnProgram: data movement: Reshape-like views, Transpose, Concat, Slice and Split (see onednn_compiler.h).
//
// Reshape, Flatten, Squeeze and Unsqueeze keep the bytes: inside a function their output is a
// view of the input's plain memory (no step); only a function output gets a copy (a plain-to-plain
// reorder). Transpose is one reorder from a strided view of the input (permuted strides) into
// plain memory; the shape-only ops right after it write nothing more (the reorder writes their
// output). Where the permuted strides are plain's or nhwc's own (NCHW <-> NHWC of a value already
// in the other order) it is no step: the output is a view of the input's bytes. Concat of plain inputs, of nhwc ones along channels, and of channel-blocked ones
// along channels (conv outputs inside a coalesced function) is host memcpys: oneDNN 2.6 picked a
// concat 5-13x slower than ref's loop for squeezenet's plain NCHW fire modules, and on blocked
// ones a kernel that made squeezenet 1.9 ms slower end to end than the copies (8.6 against
// 6.7 ms); inputs already written at their place in the Concat's buffer are skipped
// (onednn_concat_regions.cc). Other layouts take oneDNN's concat primitive. Slice (steps of 1) and Split are one
// reorder each from a window of the value's own memory (copy_window). These replace ref's
// element-by-element loops in the attention block (Reshape + Transpose around the batched
// MatMuls, the Q/K/V Slices) and squeezenet's fire modules.
//
// Values in nhwc (conv outputs, nhwc Concats, boundary values) are not copied to plain first:
// a Reshape of one that only splits or merges runs of contiguous dims is a strided view of the
// same bytes (reshape_strides, numpy's no-copy rule), and a Transpose reads through those strides.
// When shape-only ops after the Transpose bring it back to rank 4 (ShuffleNet's channel shuffle:
// Concat -> [N,2,C/2,H,W] -> Transpose -> [N,C/2,2,H,W] -> [N,C,H,W]), its one reorder writes
// the result in nhwc, so the Split and the convs after it read it as is:
//
//   before: concat (nhwc) -> reorder to plain -> transpose reorder -> 2 slice reorders -> reorder
//           to nhwc for the conv                                     (4.5 passes over the value)
//   now:    concat (nhwc) -> transpose reorder, nhwc to nhwc -> 2 slice reorders    (2 passes)
#include <algorithm>
#include <cstring>

#include "backends/onednn/onednn_anchor.h"
#include "tessera/host_tensor.h"

namespace tessera::onednn {
namespace {

bool is_shape_only(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
}

// `dims` over `strides` as a descriptor: plain's or nhwc's own when it addresses the same bytes
// (so that the layout checks elsewhere recognise it), else a strided one.
memory::desc strided_md(const Dims& dims, const Dims& strides) {
  const memory::desc plain = plain_md(dims);
  if (same_addressing(dims, strides, *strides_of(plain))) return plain;
  if (dims.size() == 4) {
    const memory::desc nhwc(dims, memory::data_type::f32, memory::format_tag::nhwc);
    if (same_addressing(dims, strides, *strides_of(nhwc))) return nhwc;
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

}  // namespace

std::optional<Dims> reshape_strides(const Dims& from, const Dims& from_strides, const Dims& to) {
  Dims od, os;   // the old dims without 1s
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1) od.push_back(from[i]), os.push_back(from_strides[i]);
  Dims ts(to.size(), 0);
  size_t oi = 0, ni = 0;
  while (oi < od.size()) {
    while (ni < to.size() && to[ni] == 1) ++ni;
    if (ni == to.size()) return std::nullopt;
    // The shortest runs od[oi..oj) and to[ni..nj) with equal products.
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = od[oi], np = to[ni];
    while (op != np) {
      if (np < op) {
        if (nj == to.size()) return std::nullopt;
        np *= to[nj++];
      } else {
        if (oj == od.size()) return std::nullopt;
        op *= od[oj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k)   // the old run must be one contiguous stretch
      if (os[k] != od[k + 1] * os[k + 1]) return std::nullopt;
    int64_t stride = os[oj - 1];
    for (size_t k = nj; k-- > ni;) {
      ts[k] = stride;
      stride *= to[k];
    }
    oi = oj;
    ni = nj;
  }
  for (; ni < to.size(); ++ni)
    if (to[ni] != 1) return std::nullopt;
  // Dims of 1: the stride of the dim inside them times its size (as a dense layout would have).
  for (size_t k = to.size(); k-- > 0;)
    if (to[k] == 1) {
      int64_t outer = 1;
      for (size_t j = 0; j < to.size(); ++j)
        if (to[j] != 1) outer = std::max(outer, ts[j] * to[j]);
      ts[k] = outer;
    }
  return ts;
}

memory OnednnProgram::over_storage(ValueId v, const memory::desc& md) {
  const memory base = value_mem(v);
  if (base.get_data_handle() != nullptr) return memory(md, engine_, base.get_data_handle());
  // A boundary value (or a view of one): its address is bound at every run.
  const ValueId root = alias_of_[static_cast<size_t>(v)] != kNoValue ? alias_of_[static_cast<size_t>(v)] : v;
  memory view(md, engine_, DNNL_MEMORY_NONE);
  bindings_.emplace_back(view, root);
  return view;
}

std::optional<Dims> OnednnProgram::own_strides(ValueId v) {
  const memory::desc md = value_mem(v).get_desc();
  if (md == plain_md(dims_of(v))) return std::nullopt;   // plain: plain views, as before
  return strides_of(md);
}

std::optional<memory> OnednnProgram::strided_view(ValueId v, const Dims& dims) {
  const std::optional<Dims> strides = own_strides(v);
  if (!strides) return std::nullopt;
  const std::optional<Dims> to = reshape_strides(dims_of(v), *strides, dims);
  if (!to) return std::nullopt;
  return over_storage(v, strided_md(dims, *to));
}

bool OnednnProgram::is_layout_op(const std::string& op) {
  return is_shape_only(op) || op == "Transpose" || op == "Concat" || op == "Slice" || op == "Split";
}

void OnednnProgram::build_layout_op(size_t n) {
  const Node& node = fn_.nodes[n];
  if (node.op == "Transpose") build_transpose(n);
  else if (node.op == "Concat") build_concat(n);
  else if (node.op == "Slice") build_slice(n);
  else if (node.op == "Split") build_split(n);
  else build_reshape(n);
}

void OnednnProgram::copy_window(ValueId x, ValueId y, const Dims& offsets) {
  if (window_view(x, y, offsets)) return;   // only layout ops read it: a view (onednn_operand_views.cc)
  const Dims xd = dims_of(x), yd = dims_of(y);
  memory base = value_mem(x);
  memory::desc window;
  try {
    window = base.get_desc().submemory_desc(yd, offsets);
  } catch (const dnnl::error&) {   // a window that cuts through channel blocks: from x's plain copy
    base = plain_base(x);
    window = base.get_desc().submemory_desc(yd, offsets);
  }
  // The same layout as x for y: a conv after a channel split of an nhwc or blocked value reads it as is.
  memory::desc out = plain_md(yd);
  if (xd.size() == 4 && base.get_desc() == memory::desc(xd, f32, tag::nhwc)) out = memory::desc(yd, f32, tag::nhwc);
  else if (const auto blocks = channel_blocks(base.get_desc(), xd); blocks && yd[1] % block_size(*blocks) == 0)
    out = memory::desc(yd, f32, *blocks);
  memory src;
  if (base.get_data_handle() != nullptr) {
    src = memory(window, engine_, base.get_data_handle());
  } else {   // a boundary value (or a view of one): its address is bound at every run
    const ValueId root = alias_of_[static_cast<size_t>(x)] != kNoValue ? alias_of_[static_cast<size_t>(x)] : x;
    src = memory(window, engine_, DNNL_MEMORY_NONE);
    bindings_.emplace_back(src, root);
  }
  add_reorder(src, dst_mem(y, out));
}

// Slice with steps of 1 (starts, ends, axes, steps as constant inputs, or opset 1's attributes):
// the window starts at the clamped starts and has the output's dims.
void OnednnProgram::build_slice(size_t n) {
  const ValueId x = fn_.nodes[n].inputs[0], y = fn_.nodes[n].outputs[0];
  if (fn_.value(y).type.numel() == 0) unsupported(fn_.nodes[n], "empty output");
  copy_window(x, y, slice_offsets(n));
}

Dims OnednnProgram::slice_offsets(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0], y = node.outputs[0];
  const Dims xd = dims_of(x), yd = dims_of(y);
  auto ints = [&](const char* attr, size_t input) {
    if (node.attrs.count(attr)) return attr_ints(node.attrs, attr);
    std::vector<int64_t> out;
    if (input >= node.inputs.size() || node.inputs[input] == kNoValue) return out;
    const Value& v = fn_.value(node.inputs[input]);
    if (!v.is_constant() || !v.data || (v.type.dtype != DType::i64 && v.type.dtype != DType::i32))
      unsupported(node, "input " + std::to_string(input) + " must be a constant integer tensor");
    const HostTensor t = HostTensor::from_tensor(Tensor{v.type, v.data});
    if (v.type.dtype == DType::i64) out.assign(t.as<int64_t>().begin(), t.as<int64_t>().end());
    else out.assign(t.as<int32_t>().begin(), t.as<int32_t>().end());
    return out;
  };
  const std::vector<int64_t> starts = ints("starts", 1), steps = ints("steps", 4);
  std::vector<int64_t> axes = ints("axes", 3);
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (axes.size() != starts.size() || (!steps.empty() && steps.size() != starts.size())) unsupported(node, "starts/axes/steps lengths differ");
  Dims offsets(xd.size(), 0);
  for (size_t k = 0; k < starts.size(); ++k) {
    if (!steps.empty() && steps[k] != 1) unsupported(node, "steps other than 1");
    const int64_t a = axes[k] < 0 ? axes[k] + static_cast<int64_t>(xd.size()) : axes[k];
    if (a < 0 || a >= static_cast<int64_t>(xd.size())) unsupported(node, "axis out of range");
    const int64_t dim = xd[static_cast<size_t>(a)];
    offsets[static_cast<size_t>(a)] = std::clamp<int64_t>(starts[k] < 0 ? starts[k] + dim : starts[k], 0, dim);
  }
  for (size_t i = 0; i < xd.size(); ++i)
    if (offsets[i] + yd[i] > xd[i]) unsupported(node, "the output does not fit the input at the starts");
  return offsets;
}

// Split: each output the window after the previous ones along the axis.
void OnednnProgram::build_split(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0];
  const auto rank = static_cast<int64_t>(dims_of(x).size());
  int64_t axis = attr_int(node.attrs, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) unsupported(node, "axis out of range");
  Dims offsets(static_cast<size_t>(rank), 0);
  for (ValueId y : node.outputs) {
    if (y == kNoValue) continue;
    if (fn_.value(y).type.numel() == 0) unsupported(node, "empty output");
    copy_window(x, y, offsets);
    offsets[static_cast<size_t>(axis)] += dims_of(y)[static_cast<size_t>(axis)];
  }
}

void OnednnProgram::build_reshape(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0], y = node.outputs[0];
  if (fn_.value(x).type.numel() != fn_.value(y).type.numel()) unsupported(node, "input and output sizes differ");
  const memory::desc md = plain_md(dims_of(y));
  if (!frame_.is_function_output(y)) {
    const ValueId root = alias_of_[static_cast<size_t>(x)] != kNoValue ? alias_of_[static_cast<size_t>(x)] : x;
    if (is_boundary(root)) alias_of_[static_cast<size_t>(y)] = root;
    const std::optional<memory> strided = strided_view(x, dims_of(y));   // x nhwc (or strided): no copy
    mem_[static_cast<size_t>(y)] = strided ? *strided : view_mem(x, md);
    if (window_views_.count(x)) window_views_[y] = true;
    return;
  }
  add_reorder(view_mem(x, md), dst_mem(y, md));
}

void OnednnProgram::build_transpose(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId x = node.inputs[0];
  const Dims xd = dims_of(x);
  const size_t rank = xd.size();
  std::vector<int64_t> perm = attr_ints(node.attrs, "perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank || rank == 0) unsupported(node, "perm does not match the input's rank");
  Dims xstrides(rank, 1), yd(rank), ystrides(rank);
  for (size_t i = rank; i-- > 1;) xstrides[i - 1] = xstrides[i] * xd[i];
  // x in nhwc or a strided view of it: read through its own strides instead of a plain copy.
  const std::optional<Dims> x_strides = own_strides(x);
  if (x_strides) xstrides = *x_strides;
  for (size_t i = 0; i < rank; ++i) {
    const auto p = static_cast<size_t>(perm[i] < 0 ? perm[i] + static_cast<int64_t>(rank) : perm[i]);
    if (p >= rank) unsupported(node, "perm out of range");
    yd[i] = xd[p];
    ystrides[i] = xstrides[p];
  }
  // A Transpose that only relabels the bytes is a view of them: plain [N,H,W,C] to [N,C,H,W] is
  // nhwc, nhwc [N,C,H,W] to [N,H,W,C] is plain (channels-last blocks between convs: ConvNeXt's
  // MatMuls over [N,H,W,C] and its depthwise convs). Only for an internal x that nothing else
  // reads: the view's buffer is x's, and a later step may write into it (a residual summed in place).
  const ValueId y = node.outputs[0];
  if (!frame_.is_function_output(y) && !is_boundary(x) && alias_of_[static_cast<size_t>(x)] == kNoValue &&
      consumers_[static_cast<size_t>(x)].size() == 1 && !window_views_.count(x)) {   // a window's bytes stay read-only
    std::optional<memory::desc> as;
    if (same_addressing(yd, ystrides, *strides_of(plain_md(yd)))) as = plain_md(yd);
    else if (rank == 4 && same_addressing(yd, ystrides, *strides_of(memory::desc(yd, f32, tag::nhwc))))
      as = memory::desc(yd, f32, tag::nhwc);
    if (as) {
      mem_[static_cast<size_t>(y)] = x_strides ? over_storage(x, *as) : view_mem(x, *as);   // blocked x: its plain copy
      return;
    }
  }
  // Shape-only ops after the transpose: the reorder writes their output directly.
  ValueId out = node.outputs[0];
  while (!frame_.is_function_output(out) && consumers_[static_cast<size_t>(out)].size() == 1) {
    const size_t c = static_cast<size_t>(consumers_[static_cast<size_t>(out)][0]);
    if (!is_shape_only(fn_.nodes[c].op) || fn_.nodes[c].inputs[0] != out) break;
    absorbed_[c] = 1;
    out = fn_.nodes[c].outputs[0];
  }
  const memory src = x_strides ? over_storage(x, memory::desc(yd, f32, ystrides)) : view_mem(x, memory::desc(yd, f32, ystrides));
  // Back at rank 4 after shape-only ops, from an nhwc source: write the result in nhwc.
  const Dims od = dims_of(out);
  if (x_strides && out != node.outputs[0] && od.size() == 4) {
    const memory::desc nhwc(od, f32, tag::nhwc);
    if (const std::optional<Dims> ts = reshape_strides(od, *strides_of(nhwc), yd)) {
      const memory dst = dst_mem(out, nhwc);
      memory through(memory::desc(yd, f32, *ts), engine_, dst.get_data_handle());
      if (dst.get_data_handle() == nullptr) bindings_.emplace_back(through, out);   // the bound output itself
      add_reorder(src, through);
      return;
    }
  }
  // K^T for a MatMul: written with its last two dims swapped, read as B in that layout.
  const std::optional<memory::desc> b_layout = out == node.outputs[0] ? b_operand_layout(out, yd, ystrides) : std::nullopt;
  const memory dst = dst_mem(out, b_layout ? *b_layout : plain_md(yd));
  add_reorder(src, dst);
}

void OnednnProgram::build_concat(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId y = node.outputs[0];
  const auto rank = static_cast<int64_t>(fn_.value(y).type.shape.size());
  int64_t axis = attr_int(node.attrs, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) unsupported(node, "axis out of range");
  std::vector<ValueId> ins;
  for (ValueId v : node.inputs)
    if (v != kNoValue && fn_.value(v).type.numel() > 0) ins.push_back(v);
  if (ins.empty()) unsupported(node, "no non-empty input");
  const bool channels = rank == 4 && axis == 1;
  bool all_plain = true, any_nhwc = false;
  std::optional<tag> blocks;   // the channel blocks of some input, when every input's channels fill whole blocks
  for (ValueId v : ins) {
    const memory::desc md = value_mem(v).get_desc();
    const bool nhwc = channels && md == memory::desc(dims_of(v), f32, tag::nhwc);
    all_plain = all_plain && md == plain_md(dims_of(v));
    any_nhwc = any_nhwc || nhwc;
    if (!blocks && channels) blocks = channel_blocks(md, dims_of(v));
  }
  if (blocks)
    for (ValueId v : ins)
      if (fn_.value(v).type.shape[1] % block_size(*blocks) != 0) blocks.reset();
  // Channels where some input is in channel blocks (a Winograd 3x3 conv's output; its 1x1 sibling
  // in SqueezeNet's fire modules writes nhwc): every input in those blocks, reordered where it is
  // not. With whole blocks, an image's channels are [C/16][H][W][16]: each input is one
  // contiguous slab per image, copied after the previous input's. The convs after it keep the
  // blocks (onednn_ops.cc). oneDNN's concat is its reference kernel on mixed layouts, and its
  // simple kernel on blocked ones is slower than these copies (above).
  const Dims yd = dims_of(y);
  int64_t outer = 1;
  std::vector<std::pair<memory, size_t>> srcs;   // memory, bytes per outer index
  memory dst;
  if (blocks) {
    outer = yd[0];
    for (ValueId v : ins)
      srcs.emplace_back(as_layout(v, memory::desc(dims_of(v), f32, *blocks)), static_cast<size_t>(fn_.value(v).type.numel() / outer) * sizeof(float));
    dst = concat_dst(y, memory::desc(yd, f32, *blocks), ins, srcs);
  } else if (channels && any_nhwc) {
    // Channels of nhwc inputs (conv outputs inside a coalesced function): the outer index is the
    // pixel, a slab one input's channels; an input in another layout is reordered to nhwc first.
    // oneDNN's concat takes its simple:any kernel here, several times slower than these copies.
    outer = yd[0] * yd[2] * yd[3];
    for (ValueId v : ins)
      srcs.emplace_back(as_layout(v, memory::desc(dims_of(v), f32, tag::nhwc)), static_cast<size_t>(fn_.value(v).type.shape[1]) * sizeof(float));
    dst = dst_mem(y, memory::desc(yd, f32, tag::nhwc));
  } else {
    if (!all_plain) {   // other layouts (conv outputs inside a coalesced function): oneDNN's concat on them
      region_of_[static_cast<size_t>(y)] = Region{};   // its own buffer (onednn_concat_regions.cc)
      try {
        std::vector<memory::desc> mds;
        std::unordered_map<int, memory> args;
        for (size_t i = 0; i < ins.size(); ++i) {
          args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = value_mem(ins[i]);
          mds.push_back(args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)].get_desc());
        }
        dnnl::concat::primitive_desc pd(static_cast<int>(axis), mds, engine_);
        args[DNNL_ARG_DST] = dst_mem(y, pd.dst_desc());
        steps_.push_back({dnnl::concat(pd), std::move(args), {}});
        return;
      } catch (const dnnl::error&) {
      }
    }
    for (int64_t i = 0; i < axis; ++i) outer *= yd[static_cast<size_t>(i)];
    for (ValueId v : ins) srcs.emplace_back(plain_mem(v), static_cast<size_t>(fn_.value(v).type.numel() / outer) * sizeof(float));
    dst = concat_dst(y, plain_md(yd), ins, srcs);
  }
  // Inputs already written at their place in dst (onednn_concat_regions.cc) are not copied.
  std::vector<std::pair<memory, size_t>> to_copy;   // memory, bytes per outer index; null memory: in place
  bool any = false;
  {
    const char* at = static_cast<const char*>(dst.get_data_handle());
    for (const auto& [m, bytes] : srcs) {
      const bool in_place = outer == 1 && at != nullptr && m.get_data_handle() == at;
      to_copy.emplace_back(in_place ? memory() : m, bytes);
      any = any || !in_place;
      if (at != nullptr) at += bytes;
    }
  }
  if (!any) return;
  std::unordered_map<int, memory> uses{{DNNL_ARG_DST, dst}};   // for the memory plan
  for (size_t i = 0; i < to_copy.size(); ++i)
    if (to_copy[i].first) uses[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = to_copy[i].first;
  steps_.push_back({{}, std::move(uses), [to_copy, dst, outer] {
    auto* out = static_cast<char*>(dst.get_data_handle());
    for (int64_t o = 0; o < outer; ++o)
      for (const auto& [m, bytes] : to_copy) {
        if (m) std::memcpy(out, static_cast<const char*>(m.get_data_handle()) + static_cast<size_t>(o) * bytes, bytes);
        out += bytes;
      }
  }, "host:concat"});
}

}  // namespace tessera::onednn
