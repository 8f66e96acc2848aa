// Resize (nearest and linear, opsets 10-17): one separable stage per resized axis.
//
// ref's resize_axis_map (backends/ref/resize_axis.h) gives, per axis and output coordinate, the
// source taps and weights, so the coordinate modes mean exactly what they mean on ref. Each axis
// whose extent or map is not the identity becomes one Func reading the previous stage:
//
//   nearest, 2x, asymmetric   up(.., o, ..) = x(.., o*in/out, ..)       an affine index, detected
//                                                                     by checking every o; Halide
//                                                                     vectorizes it as a shuffle
//   nearest, other maps       up(.., o, ..) = x(.., idx[o], ..)         idx: a baked int table
//   linear                    up(.., o, ..) = x(.., i0[o], ..) * w0[o] + x(.., i1[o], ..) * w1[o]
//
// tf_crop_and_resize (taps outside the crop box) and cubic mode are KernelUnsupported.
#include "backends/halide/halide_lowering.h"
#include "backends/ref/resize_axis.h"

namespace tessera::halide {
namespace {

using Halide::Expr;

// One axis: the stage reading `prev` with axis `d` remapped by `m`.
Halide::Func resize_axis(const HTensor& prev, size_t d, const ref::ResizeAxisMap& m, const std::string& name) {
  const int in = static_cast<int>(prev.shape[d]);
  const int out = static_cast<int>(m.taps.size());
  const auto vars = index_vars(prev.rank());
  const Halide::Var o = vars[d];
  auto read = [&](Expr i) {
    std::vector<Expr> idx = as_exprs(vars);
    idx[d] = i;
    return prev.at(idx);
  };
  Halide::Func f(name);
  bool single = true, affine = true;
  for (int k = 0; k < out; ++k) {
    const auto& t = m.taps[static_cast<size_t>(k)];
    single = single && t.size() == 1;
    affine = affine && t.size() == 1 && t[0].index == static_cast<int64_t>(k) * in / out;
  }
  if (affine) {
    define(f, vars, read(out == in ? Expr(o) : (o * in) / out));
    return f;
  }
  Halide::Buffer<int> i0(out), i1(out);
  Halide::Buffer<float> w0(out), w1(out);
  for (int k = 0; k < out; ++k) {
    const auto& t = m.taps[static_cast<size_t>(k)];
    i0(k) = static_cast<int>(t[0].index);
    w0(k) = static_cast<float>(t[0].weight);
    i1(k) = static_cast<int>(t.size() > 1 ? t[1].index : t[0].index);
    w1(k) = static_cast<float>(t.size() > 1 ? t[1].weight : 0.0);
  }
  // The clamps change nothing (the tables hold in-range indices); they tell bounds inference so.
  const Expr a = Halide::clamp(i0(o), 0, in - 1), b = Halide::clamp(i1(o), 0, in - 1);
  if (single) define(f, vars, read(a));
  else define(f, vars, read(a) * w0(o) + read(b) * w1(o));
  return f;
}

void resize_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const ValueId y = n.outputs.at(0);
  const Shape& ys = L.shape(y);
  const size_t rank = x.shape.size();
  if (ys.size() != rank) unsupported(n, "output rank differs from the input's");
  const std::string mode = attr_string(n.attrs, "mode", "nearest");
  if (mode != "nearest" && mode != "linear") unsupported(n, "mode " + mode);
  if (attr_int(n.attrs, "antialias", 0) != 0 || n.attrs.count("axes")) unsupported(n, "antialias/axes (opset 18)");
  const bool opset10 = n.inputs.size() == 2;
  const size_t scales_at = opset10 ? 1 : 2;
  const std::string coord = opset10 ? "asymmetric" : attr_string(n.attrs, "coordinate_transformation_mode", "half_pixel");
  if (coord == "tf_crop_and_resize") unsupported(n, "tf_crop_and_resize");
  std::vector<double> scales;
  if (L.has_input(n, scales_at) && L.fn().value(n.inputs[scales_at]).type.numel() > 0)
    scales = L.const_floats(n, n.inputs[scales_at]);
  if (!scales.empty() && scales.size() != rank) unsupported(n, "scales needs one value per dimension");
  HTensor cur = x;
  for (size_t d = 0; d < rank; ++d) {
    const double scale = scales.empty() ? static_cast<double>(ys[d]) / static_cast<double>(x.shape[d]) : scales[d];
    const ref::ResizeAxisMap m = ref::resize_axis_map(n, mode == "linear", coord, scale, x.shape[d], ys[d], 0.0, 1.0);
    bool identity = ys[d] == x.shape[d];
    for (int64_t k = 0; identity && k < ys[d]; ++k)
      identity = m.taps[static_cast<size_t>(k)].size() == 1 && m.taps[static_cast<size_t>(k)][0].index == k;
    if (identity) continue;
    Halide::Func stage = resize_axis(cur, d, m, "v" + std::to_string(y) + "_axis" + std::to_string(d));
    cur.shape[d] = ys[d];
    cur.func = stage;
  }
  const auto vars = index_vars(static_cast<int>(rank));
  L.define_output(y, vars, cur.at(as_exprs(vars)));
}

}  // namespace

void register_resize_ops(OpLowerings& t) { t["Resize"] = resize_op; }

}  // namespace tessera::halide
