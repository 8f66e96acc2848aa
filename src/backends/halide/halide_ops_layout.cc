// Injective ops: each output element reads one input element at an index computed from its own.
//
//   Transpose(x, perm)   y(i..) = x(j..) with j[perm[k]] = i[k]
//   Reshape [1,128,256] -> [1,128,4,64]: dimension groups of equal element count map onto each
//                        other ({1}->{1}, {128}->{128}, {256}->{4,64}); inside a group the index
//                        is linearized and split again, so unchanged dimensions stay plain
//                        variables and Halide can still vectorize the innermost one
//   Concat(a, b; axis)   y = select(i_axis < len_a, a(.., i_axis, ..), b(.., i_axis - len_a, ..))
//   Slice / Split / Pad  affine index maps; Pad's constant mode selects the pad value outside
//
// Halide's select evaluates both sides, so every read that a select guards is clamped into its
// operand's bounds: bounds inference then asks each operand only for elements it has.
// Reshape, Flatten, Squeeze and Unsqueeze are all "reshape to the output's inferred shape".
#include <algorithm>

#include "backends/halide/halide_lowering.h"

namespace tessera::halide {
namespace {

using Halide::Expr;

// The input index (tensor order) that output index `idx` of a reshape reads.
std::vector<Expr> reshape_index(const Shape& in, const Shape& out, const std::vector<Expr>& idx) {
  std::vector<Expr> src(in.size(), Expr(0));
  size_t i = 0, j = 0;
  while (i < in.size() && j < out.size()) {
    const size_t i0 = i, j0 = j;
    int64_t pin = in[i++], pout = out[j++];
    while (pin != pout) {
      if (pin < pout && i < in.size()) pin *= in[i++];
      else if (j < out.size()) pout *= out[j++];
      else break;
    }
    if (i - i0 == 1 && j - j0 == 1) {
      src[i0] = in[i0] == 1 ? Expr(0) : idx[j0];
      continue;
    }
    Expr linear = 0;
    for (size_t k = j0; k < j; ++k) linear = out[k] == 1 ? linear : linear * static_cast<int>(out[k]) + idx[k];
    int64_t stride = 1;
    for (size_t k = i; k-- > i0;) {
      src[k] = in[k] == 1 ? Expr(0) : (linear / static_cast<int>(stride)) % static_cast<int>(in[k]);
      stride *= in[k];
    }
  }
  return src;   // leftover dimensions on either side have extent 1
}

void reshape_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const ValueId y = n.outputs.at(0);
  const Shape& ys = L.shape(y);
  const auto vars = index_vars(static_cast<int>(ys.size()));
  L.define_output(y, vars, x.at(reshape_index(x.shape, ys, as_exprs(vars))));
}

void transpose_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const int r = x.rank();
  std::vector<int64_t> perm = attr_ints(n.attrs, "perm");
  if (perm.empty())
    for (int k = r - 1; k >= 0; --k) perm.push_back(k);
  if (static_cast<int>(perm.size()) != r) unsupported(n, "perm has the wrong length");
  const auto vars = index_vars(r);
  std::vector<Expr> src(static_cast<size_t>(r));
  for (int k = 0; k < r; ++k) src[static_cast<size_t>(perm[static_cast<size_t>(k)])] = vars[static_cast<size_t>(k)];
  const ValueId y = n.outputs.at(0);
  L.define_output(y, vars, x.at(src));
}

void concat_op(Lowering& L, const Node& n) {
  const ValueId y = n.outputs.at(0);
  const Shape& ys = L.shape(y);
  const int r = static_cast<int>(ys.size());
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", 0), r));
  const auto vars = index_vars(r);
  std::vector<std::pair<int64_t, Expr>> parts;   // (end offset, read)
  int64_t offset = 0;
  for (ValueId in : n.inputs) {
    const HTensor& t = L.tensor(in);
    const int64_t len = t.shape.at(axis);
    if (len == 0) continue;
    std::vector<Expr> idx = as_exprs(vars);
    idx[axis] = Halide::clamp(idx[axis] - static_cast<int>(offset), 0, static_cast<int>(len - 1));
    offset += len;
    parts.emplace_back(offset, t.at(idx));
  }
  Expr e = parts.back().second;
  for (size_t p = parts.size() - 1; p-- > 0;) e = Halide::select(vars[axis] < static_cast<int>(parts[p].first), parts[p].second, e);
  L.define_output(y, vars, e);
}

void split_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", 0), x.rank()));
  const auto vars = index_vars(x.rank());
  int64_t offset = 0;
  for (ValueId y : n.outputs) {
    if (y == kNoValue) continue;
    std::vector<Expr> idx = as_exprs(vars);
    idx[axis] = idx[axis] + static_cast<int>(offset);
    offset += L.shape(y).at(axis);
    L.define_output(y, vars, x.at(idx));
  }
}

// Slice(x, starts, ends[, axes, steps]) (opset >= 10) or its attributes (opset 1).
void slice_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const int r = x.rank();
  std::vector<int64_t> starts, axes, steps;
  if (L.has_input(n, 1)) {
    starts = L.const_ints(n, n.inputs[1]);
    if (L.has_input(n, 3)) axes = L.const_ints(n, n.inputs[3]);
    if (L.has_input(n, 4)) steps = L.const_ints(n, n.inputs[4]);
  } else {
    starts = attr_ints(n.attrs, "starts");
    axes = attr_ints(n.attrs, "axes");
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) unsupported(n, "starts/axes/steps lengths differ");
  const auto vars = index_vars(r);
  std::vector<Expr> idx = as_exprs(vars);
  for (size_t k = 0; k < starts.size(); ++k) {
    const auto a = static_cast<size_t>(normalize_axis(n, axes[k], r));
    const int64_t dim = x.shape[a], step = steps[k];
    if (step == 0) unsupported(n, "step 0");
    int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    idx[a] = static_cast<int>(s) + vars[a] * static_cast<int>(step);
  }
  const ValueId y = n.outputs.at(0);
  L.define_output(y, vars, x.at(idx));
}

// Pad(x, pads[, constant_value, axes]) in constant, edge or reflect mode.
void pad_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const int r = x.rank();
  const std::string mode = attr_string(n.attrs, "mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") unsupported(n, "mode " + mode);
  std::vector<int64_t> pads = L.has_input(n, 1) ? L.const_ints(n, n.inputs[1]) : attr_ints(n.attrs, "pads");
  std::vector<int64_t> axes;
  if (L.has_input(n, 3)) axes = L.const_ints(n, n.inputs[3]);
  if (axes.empty())
    for (int k = 0; k < r; ++k) axes.push_back(k);
  if (pads.size() != 2 * axes.size()) unsupported(n, "pads needs two values per axis");
  std::vector<int64_t> begin(static_cast<size_t>(r), 0);
  for (size_t k = 0; k < axes.size(); ++k) begin[static_cast<size_t>(normalize_axis(n, axes[k], r))] = pads[k];
  float value = static_cast<float>(attr_float(n.attrs, "value", 0.0));
  if (L.has_input(n, 2)) value = static_cast<float>(L.const_floats(n, n.inputs[2]).at(0));
  const auto vars = index_vars(r);
  std::vector<Expr> idx;
  Expr inside = Halide::Internal::const_true();
  for (size_t k = 0; k < static_cast<size_t>(r); ++k) {
    const int dim = static_cast<int>(x.shape[k]);
    Expr i = vars[k] - static_cast<int>(begin[k]);
    if (mode == "reflect") {
      i = Halide::cast<int>(Halide::abs(i));   // abs of an Int(32) is a UInt(32)
      i = Halide::select(i >= dim, 2 * (dim - 1) - i, i);
    }
    inside = inside && i >= 0 && i < dim;
    idx.push_back(Halide::clamp(i, 0, dim - 1));
  }
  Expr e = x.at(idx);
  if (mode == "constant") e = Halide::select(inside, e, value);
  const ValueId y = n.outputs.at(0);
  L.define_output(y, vars, e);
}

void expand_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const ValueId y = n.outputs.at(0);
  const Shape& ys = L.shape(y);
  const auto vars = index_vars(static_cast<int>(ys.size()));
  L.define_output(y, vars, broadcast_at(x, as_exprs(vars), ys));
}

}  // namespace

void register_layout_ops(OpLowerings& t) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) t[op] = reshape_op;
  t["Transpose"] = transpose_op;
  t["Concat"] = concat_op;
  t["Split"] = split_op;
  t["Slice"] = slice_op;
  t["Pad"] = pad_op;
  t["Expand"] = expand_op;
}

}  // namespace tessera::halide
