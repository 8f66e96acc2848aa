// OnednnProgram: a channel Concat followed by a channel shuffle, as one host step.
//
// Terms. A *channel shuffle* of g groups is Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose
// perm [0, 2, 1, 3, 4], Reshape back to [N, C, H, W] (ShuffleNet's, exported from PyTorch): output
// channel c*g + k is input channel k*(C/g) + c. When the shuffled value is a channel Concat whose
// inputs each hold whole groups, output channel c*g + k is channel c of group k, read where that
// group lives (one input, at a channel offset). And when an input is a channel Slice read by the
// Concat alone (ShuffleNet v2's `x1` half, passed through untouched), the group is read in the
// Slice's source, whose layout is nhwc here as everywhere in a shuffle network. When the shuffled
// value is read only by channel Slices (the next unit's split into x1 and x2), the step writes
// each Slice's channels into that Slice's own buffer, and the whole value is never written:
//
//   before: 2 slice reorders -> host concat (nhwc) -> transpose reorder (nhwc to nhwc)
//           (x1 and x2 copied, every channel written twice: 4 passes over the unit's value)
//   now:    shuffle: every output channel written once, into x1 and x2 of the next unit,
//           interleaved from the groups' rows (1 pass)
//
// Per output pixel the step copies g rows of C/g floats into one row of C, interleaved; the
// groups' rows sit at the pixel's offset in nhwc memories (pixel stride: that memory's channel
// count). The result is in nhwc (the value, or each Slice's part), the layout the convs after a
// shuffle read as they are; one host step per buffer written.
//
// What it needs: f32, rank 4, the groups whole within the inputs, and no intermediate of the
// pattern read elsewhere or leaving the function. An input in another layout (channel blocks) is
// reordered to nhwc first (as_layout); a deferred Slice whose source is not nhwc is copied first,
// as build_slice would have. Nothing here is a model's special case: any Concat-shuffle-Reshape
// chain with this structure takes it.
#include <algorithm>

#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {
namespace {

// The single consumer of v, when v has exactly one and is not a function output.
std::optional<NodeId> only_consumer(const std::vector<std::vector<NodeId>>& consumers, const FunctionFrame& frame, ValueId v) {
  if (frame.is_function_output(v) || consumers[static_cast<size_t>(v)].size() != 1) return std::nullopt;
  return consumers[static_cast<size_t>(v)][0];
}

}  // namespace

std::optional<ShuffleMatch> OnednnProgram::match_shuffle(size_t n) const {
  const Node& concat = fn_.nodes[n];
  if (concat.op != "Concat" || concat.outputs.size() != 1) return std::nullopt;
  const ValueId y = concat.outputs[0];
  const Shape& ys = fn_.value(y).type.shape;
  if (ys.size() != 4 || fn_.value(y).type.dtype != DType::f32) return std::nullopt;
  int64_t axis = attr_int(concat.attrs, "axis", 1);
  if (axis < 0) axis += 4;
  if (axis != 1) return std::nullopt;
  ShuffleMatch m;
  const auto r1 = only_consumer(consumers_, frame_, y);
  if (!r1 || fn_.node(*r1).op != "Reshape" || fn_.node(*r1).inputs[0] != y) return std::nullopt;
  const Shape& s5 = fn_.value(fn_.node(*r1).outputs[0]).type.shape;
  if (s5.size() != 5 || s5[0] != ys[0] || s5[3] != ys[2] || s5[4] != ys[3] || s5[1] < 2 || s5[1] * s5[2] != ys[1]) return std::nullopt;
  const auto t = only_consumer(consumers_, frame_, fn_.node(*r1).outputs[0]);
  if (!t || fn_.node(*t).op != "Transpose" || attr_ints(fn_.node(*t).attrs, "perm") != std::vector<int64_t>{0, 2, 1, 3, 4})
    return std::nullopt;
  const auto r2 = only_consumer(consumers_, frame_, fn_.node(*t).outputs[0]);
  if (!r2 || fn_.node(*r2).op != "Reshape" || fn_.node(*r2).inputs[0] != fn_.node(*t).outputs[0]) return std::nullopt;
  m.out = fn_.node(*r2).outputs[0];
  if (fn_.value(m.out).type.shape != ys) return std::nullopt;
  m.groups = s5[1];
  const int64_t width = s5[2];
  for (ValueId v : concat.inputs) {
    if (v == kNoValue || fn_.value(v).type.numel() == 0) continue;
    const Shape& s = fn_.value(v).type.shape;
    if (s.size() != 4 || s[0] != ys[0] || s[2] != ys[2] || s[3] != ys[3] || s[1] % width != 0) return std::nullopt;
    m.inputs.push_back(v);
  }
  m.nodes = {*r1, *t, *r2};
  return m;
}

namespace {

// Whether node p is a Slice of a rank-4 value along channels only (its other dims whole).
bool channel_slice(const Graph& fn, NodeId p) {
  if (p == kNoNode || fn.node(p).op != "Slice" || fn.node(p).outputs.size() != 1) return false;
  const Shape &xs = fn.value(fn.node(p).inputs[0]).type.shape, &vs = fn.value(fn.node(p).outputs[0]).type.shape;
  return xs.size() == 4 && vs.size() == 4 && xs[0] == vs[0] && xs[2] == vs[2] && xs[3] == vs[3];
}

}  // namespace

void OnednnProgram::find_shuffles() {
  for (size_t n = 0; n < fn_.nodes.size(); ++n) {
    std::optional<ShuffleMatch> m = match_shuffle(n);
    if (!m) continue;
    // A channel Slice read by this Concat alone: deferred, read in its source if that is nhwc
    // (unless an earlier shuffle writes it as one of its parts).
    for (ValueId v : m->inputs) {
      const NodeId p = fn_.value(v).producer;
      if (!channel_slice(fn_, p) || absorbed_[static_cast<size_t>(p)] || !only_consumer(consumers_, frame_, v)) continue;
      absorbed_[static_cast<size_t>(p)] = 1;
      m->deferred.push_back(p);
    }
    // The shuffled value read only by channel Slices (ShuffleNet v2's split of the next unit):
    // the step writes each Slice's channels into that Slice's own buffer, and the value itself
    // is never written.
    bool split = !frame_.is_function_output(m->out) && !consumers_[static_cast<size_t>(m->out)].empty();
    for (NodeId c : consumers_[static_cast<size_t>(m->out)])
      split = split && channel_slice(fn_, c) && fn_.node(c).inputs[0] == m->out && !frame_.is_function_output(fn_.node(c).outputs[0]);
    if (split)
      for (NodeId c : consumers_[static_cast<size_t>(m->out)]) {
        absorbed_[static_cast<size_t>(c)] = 1;
        m->parts.push_back(c);
      }
    shuffle_at_.emplace(n, std::move(*m));
  }
}

void OnednnProgram::build_shuffle(size_t n, const ShuffleMatch& m) {
  const Dims yd = dims_of(m.out);
  const int64_t g = m.groups, width = yd[1] / g, pixels = yd[0] * yd[2] * yd[3];
  struct Row {
    memory mem;
    int64_t offset, stride;   // floats: the group's first channel at pixel 0, floats per pixel
  };
  std::vector<Row> rows;   // by group
  std::unordered_map<int, memory> uses;   // for the memory plan
  for (ValueId v : m.inputs) {
    const Dims vd = dims_of(v);
    memory mem;
    int64_t offset = 0, stride = vd[1];
    const NodeId p = fn_.value(v).producer;
    const bool deferred = p != kNoNode && std::find(m.deferred.begin(), m.deferred.end(), p) != m.deferred.end();
    if (deferred) {
      const ValueId x = fn_.node(p).inputs[0];
      const Dims offsets = slice_offsets(static_cast<size_t>(p));
      const memory xm = value_mem(x);
      if (xm.get_desc() == memory::desc(dims_of(x), f32, tag::nhwc)) {
        mem = xm;
        offset = offsets[1];
        stride = dims_of(x)[1];
      } else {
        copy_window(x, v, offsets);   // as build_slice would have, then read like any input
      }
    }
    if (!mem) mem = as_layout(v, memory::desc(vd, f32, tag::nhwc));
    uses[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(uses.size())] = mem;
    for (int64_t k = 0; k < vd[1] / width; ++k) rows.push_back({mem, offset + k * width, stride});
  }
  for (NodeId r : m.nodes) absorbed_[static_cast<size_t>(r)] = 1;
  struct Part {
    memory mem;
    int64_t lo, hi;   // the shuffled channels it holds
  };
  std::vector<Part> parts;
  if (m.parts.empty()) {
    parts.push_back({dst_mem(m.out, memory::desc(yd, f32, tag::nhwc)), 0, yd[1]});
  } else {
    for (NodeId c : m.parts) {
      const ValueId v = fn_.node(c).outputs[0];
      const int64_t lo = slice_offsets(static_cast<size_t>(c))[1];
      parts.push_back({dst_mem(v, memory::desc(dims_of(v), f32, tag::nhwc)), lo, lo + dims_of(v)[1]});
    }
  }
  // One step per part, each the DST of its own (the memory plan sees every buffer's first write).
  for (const Part& part : parts) {
    std::unordered_map<int, memory> args = uses;
    args[DNNL_ARG_DST] = part.mem;
    steps_.push_back({{}, std::move(args), [rows, part, g, pixels] {
      std::vector<const float*> base(rows.size());
      for (size_t k = 0; k < rows.size(); ++k) base[k] = static_cast<const float*>(rows[k].mem.get_data_handle()) + rows[k].offset;
      float* out = static_cast<float*>(part.mem.get_data_handle());
      const int64_t lo = part.lo, hi = part.hi;
      for (int64_t p = 0; p < pixels; ++p, out += hi - lo) {
        if (g == 2 && lo % 2 == 0 && hi % 2 == 0) {   // the common case, a loop the compiler vectorizes as an interleave
          const float* a = base[0] + p * rows[0].stride;
          const float* b = base[1] + p * rows[1].stride;
          for (int64_t c = lo / 2; c < hi / 2; ++c) {
            out[2 * c - lo] = a[c];
            out[2 * c + 1 - lo] = b[c];
          }
          continue;
        }
        for (int64_t j = lo; j < hi; ++j) {   // shuffled channel j is channel j / g of group j % g
          const auto k = static_cast<size_t>(j % g);
          out[j - lo] = base[k][p * rows[k].stride + j / g];
        }
      }
    }, "host:channel_shuffle"});
  }
}

}  // namespace tessera::onednn
