// OnednnProgram: attention's head split without copies (see onednn_compiler.h).
//
// Transformer exports split a fused projection into heads with Slice (or Split) -> Reshape ->
// Transpose, and transpose K for Q * K^T:
//
//   qkv [S, 1, 3E] -> Slice -> [S, 1, E] -> Reshape [S, h, d] -> Transpose -> [h, S, d]  (Q, V)
//                                                              -> Transpose -> [h, d, S]  (K^T)
//
// Built op by op that is five copies per operand set (three windows, two head transposes) plus a
// transposing copy of K whose inner runs are one float long. Two views replace them:
//
// - A window (Slice, Split) that only layout ops read, a Transpose directly or through one
//   shape-only op, is a view of its input's bytes: the input's strides, its address moved to
//   the window's start (no step). The Transpose after it reads through those strides, so each
//   head split is one reorder from the projection's own output.
// - A Transpose that only a MatMul reads as its B, and that moves its source's innermost dim to
//   the second-last (K^T), is written with its last two dims swapped ("acb" for rank 3): the
//   copy keeps the source's contiguous runs, and oneDNN's brgemm matmul reads B in that layout
//   as fast as plain (oneDNN 2.6, [3, 197, 64] x [3, 64, 197]: 65 against 64-68 us).
//
// What must hold: the window's input lives in memory this function owns (not a boundary value
// bound per run) in a layout without blocks; the view is never written: its readers are layout
// ops, which only read, and a Transpose of it (or of a Reshape of it) always copies, never
// becomes a relabelling view that a later step could sum a residual into in place
// (window_views_, build_transpose).
// A Reshape whose strides cannot follow the view makes its plain copy (view_mem), as before.
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {
namespace {

bool shape_only(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
}

}  // namespace

bool OnednnProgram::window_view(ValueId x, ValueId y, const Dims& offsets) {
  if (frame_.is_function_output(y) || is_boundary(x) || alias_of_[static_cast<size_t>(x)] != kNoValue) return false;
  const auto& readers = consumers_[static_cast<size_t>(y)];
  if (readers.empty()) return false;
  for (NodeId c : readers) {
    const Node& r = fn_.node(c);
    if (r.inputs.empty() || r.inputs[0] != y) return false;
    if (r.op == "Transpose") continue;
    if (!shape_only(r.op)) return false;
    const ValueId out = r.outputs[0];
    if (frame_.is_function_output(out) || consumers_[static_cast<size_t>(out)].empty()) return false;
    for (NodeId t : consumers_[static_cast<size_t>(out)])
      if (fn_.node(t).op != "Transpose" || fn_.node(t).inputs[0] != out) return false;
  }
  const memory base = value_mem(x);
  if (base.get_data_handle() == nullptr) return false;
  const dnnl_memory_desc_t& d = base.get_desc().data;
  if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 || d.offset0 != 0 || d.data_type != dnnl_f32)
    return false;
  const Dims yd = dims_of(y);
  const auto rank = static_cast<size_t>(d.ndims);
  if (rank != yd.size() || offsets.size() != rank) return false;
  Dims strides(d.format_desc.blocking.strides, d.format_desc.blocking.strides + rank);
  int64_t start = 0;
  for (size_t i = 0; i < rank; ++i) start += offsets[i] * strides[i];
  // Plain's own descriptor where the window addresses its bytes that way (a window along the
  // outermost dim), so that the layout checks elsewhere recognise it.
  Dims plain_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) plain_strides[i - 1] = plain_strides[i] * yd[i];
  bool plain = true;
  for (size_t i = 0; i < rank; ++i) plain = plain && (yd[i] == 1 || strides[i] == plain_strides[i]);
  const memory::desc md = plain ? plain_md(yd) : memory::desc(yd, f32, strides);
  mem_[static_cast<size_t>(y)] = memory(md, engine_, static_cast<float*>(base.get_data_handle()) + start);
  window_views_[y] = true;
  return true;
}

namespace {

// Dense strides of `dims` with the last two swapped in memory order ("acb" at rank 3).
memory::desc swapped_md(const Dims& yd) {
  const size_t rank = yd.size();
  Dims s(rank);
  s[rank - 2] = 1;
  s[rank - 1] = yd[rank - 2];
  int64_t next = yd[rank - 2] * yd[rank - 1];
  for (size_t i = rank - 2; i-- > 0;) {
    s[i] = next;
    next *= yd[i];
  }
  return memory::desc(yd, memory::data_type::f32, s);
}

}  // namespace

bool OnednnProgram::stored_swapped(ValueId b, const Dims& bd) const {
  if (bd.size() < 2 || precision_ != Precision::f32 || fn_.value(b).kind != ValueKind::Intermediate) return false;
  const std::optional<memory>& m = mem_[static_cast<size_t>(b)];
  return m && m->get_data_handle() != nullptr && m->get_desc() == swapped_md(bd);
}

std::optional<memory::desc> OnednnProgram::b_operand_layout(ValueId y, const Dims& yd, const Dims& ystrides) const {
  const size_t rank = yd.size();
  if (rank < 2 || precision_ != Precision::f32 || frame_.is_function_output(y)) return std::nullopt;
  const auto& readers = consumers_[static_cast<size_t>(y)];
  if (readers.size() != 1) return std::nullopt;
  const Node& mm = fn_.node(readers[0]);
  if (mm.op != "MatMul" || mm.inputs.size() != 2 || mm.inputs[1] != y || mm.inputs[0] == y) return std::nullopt;
  if (ystrides[rank - 2] != 1 || ystrides[rank - 1] == 1) return std::nullopt;   // not the source's runs moved
  return swapped_md(yd);
}

}  // namespace tessera::onednn
