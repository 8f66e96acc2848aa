// Reductions and normalizations: a reduction is a Func with an update over an RDom spanning the
// reduced axes; what follows it (the divide of a mean, Softmax's exp and normalization, a layer
// norm's scale and shift) reads it as an ordinary Func.
//
//   ReduceMean(x[B,S,H], axes=[-1], keepdims)   acc(0,s,b) = 0;  acc(0,s,b) += x(r,s,b)   r in [0,H)
//                                               y = acc / H
//   Softmax(x, axis)                            m = max_r x;  e = exp(x - m);  s = sum_r e;  y = e / s
//   LayerNormalization(x, scale, bias; axis)    mean, then variance of (x - mean), then
//                                               (x - mean) / sqrt(var + eps) * scale + bias
//   GlobalAveragePool(x[N,C,H,W])                a reduction over H and W, kept as [N,C,1,1]
//   BatchNormalization (inference)              y = x * a[c] + b[c], a = scale / sqrt(var + eps),
//                                               b = bias - mean * a (per channel, dimension 1)
//
// Accumulation is in f32 (ref accumulates in double): the test tolerance covers the difference
// for the row lengths models use (hundreds to a few thousand).
#include <algorithm>
#include <limits>

#include "backends/halide/halide_lowering.h"

namespace tessera::halide {
namespace {

using Halide::Expr;

enum class Combine { Sum, Max, Min, Prod };

// Reduces x over `axes` (tensor order, sorted, unique) into a Func indexed like x with the reduced
// axes dropped when !keepdims and held at 0 when keepdims. `term` maps x's element to what is
// accumulated (x itself, x*x, ...).
Halide::Func reduce(Lowering& L, const HTensor& x, const std::vector<int>& axes, bool keepdims, Combine how,
                    const std::function<Expr(Expr)>& term, const std::string& name) {
  std::vector<Halide::Range> ranges;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) ranges.emplace_back(0, static_cast<int>(x.shape[static_cast<size_t>(*it)]));
  Halide::RDom r(ranges);
  const int out_rank = keepdims ? x.rank() : x.rank() - static_cast<int>(axes.size());
  const auto vars = index_vars(out_rank);
  std::vector<Expr> src, lhs;
  int next = 0;
  for (int k = 0; k < x.rank(); ++k) {
    auto pos = std::find(axes.begin(), axes.end(), k);
    if (pos != axes.end()) {
      src.push_back(r[static_cast<int>(axes.end() - pos) - 1]);
      if (keepdims) lhs.push_back(vars[static_cast<size_t>(next++)]);
    } else {
      src.push_back(vars[static_cast<size_t>(next)]);
      lhs.push_back(vars[static_cast<size_t>(next++)]);
    }
  }
  Halide::Func acc(name);
  const float init = how == Combine::Sum ? 0.0f : how == Combine::Prod ? 1.0f
                   : how == Combine::Max ? -std::numeric_limits<float>::infinity()
                                         : std::numeric_limits<float>::infinity();
  define(acc, vars, Expr(init));
  std::vector<Expr> rev(lhs.rbegin(), lhs.rend());
  const Expr v = term(x.at(src));
  switch (how) {
    case Combine::Sum: acc(rev) = acc(rev) + v; break;
    case Combine::Prod: acc(rev) = acc(rev) * v; break;
    case Combine::Max: acc(rev) = Halide::max(acc(rev), v); break;
    case Combine::Min: acc(rev) = Halide::min(acc(rev), v); break;
  }
  Shape shape;
  for (int k = 0; k < x.rank(); ++k)
    if (keepdims || std::find(axes.begin(), axes.end(), k) == axes.end())
      shape.push_back(std::find(axes.begin(), axes.end(), k) == axes.end() ? x.shape[static_cast<size_t>(k)] : 1);
  L.note_reduction(acc, shape);
  return acc;
}

int64_t product(const HTensor& x, const std::vector<int>& axes) {
  int64_t p = 1;
  for (int a : axes) p *= x.shape[static_cast<size_t>(a)];
  return p;
}

// ReduceSum/Mean/Max/Min/Prod/SumSquare/L2: axes from the attribute (opset < 18) or input 1.
OpLowering reduce_op(Combine how, bool mean, bool square, bool root) {
  return [=](Lowering& L, const Node& n) {
    const HTensor& x = L.tensor(n.inputs.at(0));
    std::vector<int64_t> raw = L.has_input(n, 1) ? L.const_ints(n, n.inputs[1]) : attr_ints(n.attrs, "axes");
    if (raw.empty() && attr_int(n.attrs, "noop_with_empty_axes", 0) != 0) unsupported(n, "noop_with_empty_axes");
    std::vector<int> axes;
    if (raw.empty())
      for (int k = 0; k < x.rank(); ++k) axes.push_back(k);
    for (int64_t a : raw) axes.push_back(normalize_axis(n, a, x.rank()));
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    const bool keepdims = attr_int(n.attrs, "keepdims", 1) != 0;
    const ValueId y = n.outputs.at(0);
    Halide::Func acc = reduce(L, x, axes, keepdims, how, [square](Expr e) { return square ? e * e : e; },
                              "v" + std::to_string(y) + "_acc");
    const auto vars = index_vars(static_cast<int>(L.shape(y).size()));
    Expr e = HTensor{acc, L.shape(y)}.at(as_exprs(vars));
    if (mean) e = e / static_cast<float>(product(x, axes));
    if (root) e = Halide::sqrt(e);
    L.define_output(y, vars, e);
  };
}

// Softmax / LogSoftmax along one axis (opset 13).
OpLowering softmax_op(bool log) {
  return [log](Lowering& L, const Node& n) {
    const HTensor& x = L.tensor(n.inputs.at(0));
    const int axis = normalize_axis(n, attr_int(n.attrs, "axis", -1), x.rank());
    const ValueId y = n.outputs.at(0);
    const std::string base = "v" + std::to_string(y);
    Halide::Func mx = reduce(L, x, {axis}, true, Combine::Max, [](Expr e) { return e; }, base + "_max");
    Shape rs = x.shape;
    rs[static_cast<size_t>(axis)] = 1;
    const HTensor m{mx, rs};
    const auto vars = index_vars(x.rank());
    const auto idx = as_exprs(vars);
    Halide::Func ex(base + "_exp");
    define(ex, vars, Halide::exp(x.at(idx) - broadcast_at(m, idx, x.shape)));
    const HTensor e{ex, x.shape};
    const HTensor s{reduce(L, e, {axis}, true, Combine::Sum, [](Expr v) { return v; }, base + "_sum"), rs};
    Halide::Func out = L.func_for(y);
    if (log)
      define(out, vars, x.at(idx) - broadcast_at(m, idx, x.shape) - Halide::log(broadcast_at(s, idx, x.shape)));
    else
      define(out, vars, e.at(idx) / broadcast_at(s, idx, x.shape));
    L.set(y, out);
  };
}

// LayerNormalization(x, scale[, bias]) over axes [axis, rank).
void layer_norm_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const int axis = normalize_axis(n, attr_int(n.attrs, "axis", -1), x.rank());
  const float eps = static_cast<float>(attr_float(n.attrs, "epsilon", 1e-5));
  std::vector<int> axes;
  for (int k = axis; k < x.rank(); ++k) axes.push_back(k);
  const float count = static_cast<float>(product(x, axes));
  const ValueId y = n.outputs.at(0);
  const std::string base = "v" + std::to_string(y);
  Shape rs = x.shape;
  for (int a : axes) rs[static_cast<size_t>(a)] = 1;
  const auto vars = index_vars(x.rank());
  const auto idx = as_exprs(vars);
  Halide::Func mean(base + "_mean");
  define(mean, vars, HTensor{reduce(L, x, axes, true, Combine::Sum, [](Expr e) { return e; }, base + "_sum"), rs}.at(as_exprs(vars)) / count);
  const HTensor m{mean, rs};
  Halide::Func centered(base + "_centered");
  define(centered, vars, x.at(idx) - broadcast_at(m, idx, x.shape));
  const HTensor c{centered, x.shape};
  Halide::Func inv(base + "_inv");
  define(inv, vars, 1.0f / Halide::sqrt(HTensor{reduce(L, c, axes, true, Combine::Sum, [](Expr e) { return e * e; }, base + "_sq"), rs}
                                           .at(as_exprs(vars)) / count + eps));
  Expr e = c.at(idx) * broadcast_at(HTensor{inv, rs}, idx, x.shape) * broadcast_at(L.tensor(n.inputs.at(1)), idx, x.shape);
  if (L.has_input(n, 2)) e = e + broadcast_at(L.tensor(n.inputs[2]), idx, x.shape);
  L.define_output(y, vars, e);
}

// BatchNormalization in inference form (training_mode = 0; Mean/Var outputs not produced).
void batch_norm_op(Lowering& L, const Node& n) {
  if (attr_int(n.attrs, "training_mode", 0) != 0) unsupported(n, "training_mode");
  const HTensor& x = L.tensor(n.inputs.at(0));
  if (x.rank() < 2) unsupported(n, "input rank < 2");
  const float eps = static_cast<float>(attr_float(n.attrs, "epsilon", 1e-5));
  const ValueId y = n.outputs.at(0);
  const std::string base = "v" + std::to_string(y);
  Halide::Var c("c");
  const HTensor &scale = L.tensor(n.inputs.at(1)), &bias = L.tensor(n.inputs.at(2));
  const HTensor &mean = L.tensor(n.inputs.at(3)), &var = L.tensor(n.inputs.at(4));
  Halide::Func a(base + "_a"), b(base + "_b");
  a(c) = scale.at({c}) / Halide::sqrt(var.at({c}) + eps);
  b(c) = bias.at({c}) - mean.at({c}) * a(c);
  const auto vars = index_vars(x.rank());
  L.define_output(y, vars, x.at(as_exprs(vars)) * a(vars[1]) + b(vars[1]));
}

// GlobalAveragePool / GlobalMaxPool: a reduction over every spatial axis (2..rank), kept as 1s.
OpLowering global_pool_op(Combine how, bool mean) {
  return [=](Lowering& L, const Node& n) {
    const HTensor& x = L.tensor(n.inputs.at(0));
    std::vector<int> axes;
    for (int k = 2; k < x.rank(); ++k) axes.push_back(k);
    const ValueId y = n.outputs.at(0);
    Halide::Func acc = reduce(L, x, axes, true, how, [](Expr e) { return e; }, "v" + std::to_string(y) + "_acc");
    const auto vars = index_vars(x.rank());
    Expr e = HTensor{acc, L.shape(y)}.at(as_exprs(vars));
    if (mean) e = e / static_cast<float>(product(x, axes));
    L.define_output(y, vars, e);
  };
}

}  // namespace

void register_reduce_ops(OpLowerings& t) {
  t["ReduceSum"] = reduce_op(Combine::Sum, false, false, false);
  t["ReduceMean"] = reduce_op(Combine::Sum, true, false, false);
  t["ReduceMax"] = reduce_op(Combine::Max, false, false, false);
  t["ReduceMin"] = reduce_op(Combine::Min, false, false, false);
  t["ReduceProd"] = reduce_op(Combine::Prod, false, false, false);
  t["ReduceSumSquare"] = reduce_op(Combine::Sum, false, true, false);
  t["ReduceL2"] = reduce_op(Combine::Sum, false, true, true);
  t["GlobalAveragePool"] = global_pool_op(Combine::Sum, true);
  t["GlobalMaxPool"] = global_pool_op(Combine::Max, false);
  t["Softmax"] = softmax_op(false);
  t["LogSoftmax"] = softmax_op(true);
  t["LayerNormalization"] = layer_norm_op;
  t["BatchNormalization"] = batch_norm_op;
}

}  // namespace tessera::halide
