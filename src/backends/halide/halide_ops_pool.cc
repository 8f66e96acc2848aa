// MaxPool and AveragePool: a reduction over an RDom spanning the kernel window.
//
//   MaxPool(x[N,C,H,W]; k, s, pads, dilations)
//     y(w,h,c,n) = max over (kh,kw) of  x(w*s - pw + kw*d, h*s - ph + kh*d, c, n)   taps inside x only
//   AveragePool: the sum over the same taps divided by the tap count, which is a product of
//     per-dimension counts (taps inside the input, or inside the padded input with
//     count_include_pad = 1; with ceil_mode a last window may hang past the end padding and those
//     taps count for neither), computed here and baked in as one small table per dimension.
//
// Window geometry (pads from auto_pad, the ceil_mode output check) is ref's forward_window, so
// both backends read the attributes the same way. A window that never leaves the input needs no
// guard: the select and the clamp are emitted only for dimensions with padding or ceil_mode.
#include <limits>

#include "backends/halide/halide_lowering.h"
#include "backends/ref/window.h"

namespace tessera::halide {
namespace {

using Halide::Expr;

OpLowering pool_op(bool max) {
  return [max](Lowering& L, const Node& n) {
    const HTensor& x = L.tensor(n.inputs.at(0));
    const ValueId y = n.outputs.at(0);
    const Shape& ys = L.shape(y);
    if (x.rank() < 3) unsupported(n, "input rank < 3");
    const size_t k = static_cast<size_t>(x.rank() - 2);
    const Shape in(x.shape.begin() + 2, x.shape.end()), out(ys.begin() + 2, ys.end());
    const ref::Window w = ref::forward_window(n, {}, in, out, attr_int(n.attrs, "ceil_mode", 0) != 0);
    std::vector<Halide::Range> ranges;
    for (size_t d = k; d-- > 0;) ranges.emplace_back(0, static_cast<int>(w.kernel[d]));
    Halide::RDom r(ranges);
    const auto vars = index_vars(x.rank());
    std::vector<Expr> src{vars[0], vars[1]};
    Expr inside = Halide::Internal::const_true();
    bool guarded = false;
    std::vector<std::vector<float>> counts(k);
    const bool include_pad = attr_int(n.attrs, "count_include_pad", 0) != 0;
    for (size_t d = 0; d < k; ++d) {
      const int64_t s = w.strides[d], pb = w.pad_begin[d], dil = w.dilations[d];
      Expr i = vars[2 + d] * static_cast<int>(s) - static_cast<int>(pb) + r[static_cast<int>(k - 1 - d)] * static_cast<int>(dil);
      const int64_t lo = -pb, hi = (out[d] - 1) * s - pb + (w.kernel[d] - 1) * dil;
      if (lo < 0 || hi >= in[d]) {
        guarded = true;
        inside = inside && i >= 0 && i < static_cast<int>(in[d]);
        i = Halide::clamp(i, 0, static_cast<int>(in[d] - 1));
      }
      src.push_back(i);
      for (int64_t o = 0; o < out[d]; ++o) {
        int64_t c = 0;
        for (int64_t t = 0; t < w.kernel[d]; ++t) {
          const int64_t at = o * s - pb + t * dil;
          c += include_pad ? (at >= -pb && at < in[d] + w.pad_end[d]) : (at >= 0 && at < in[d]);
        }
        counts[d].push_back(static_cast<float>(c));
      }
    }
    const float lowest = -std::numeric_limits<float>::infinity();
    Expr tap = x.at(src);
    if (guarded) tap = Halide::select(inside, tap, max ? Expr(lowest) : Expr(0.0f));
    const std::string base = "v" + std::to_string(y);
    Halide::Func acc(base + "_acc");
    define(acc, vars, Expr(max ? lowest : 0.0f));
    std::vector<Halide::Var> rev(vars.rbegin(), vars.rend());
    if (max) acc(rev) = Halide::max(acc(rev), tap);
    else acc(rev) = acc(rev) + tap;
    // Not a note_reduction: each window feeds exactly one output element, so the window's
    // accumulator is best computed inside its consumer's (vectorized) loop, Halide's default.
    Expr e = acc(rev);
    if (!max) {
      for (size_t d = 0; d < k; ++d) {
        const auto& c = counts[d];
        if (std::all_of(c.begin(), c.end(), [&](float v) { return v == c[0]; })) {
          e = e / c[0];
          continue;
        }
        Halide::Buffer<float> table(static_cast<int>(c.size()));
        std::copy(c.begin(), c.end(), table.data());
        e = e / table(vars[2 + d]);
      }
    }
    Halide::Func result = L.func_for(y);
    define(result, vars, e);
    L.set(y, result);
  };
}

}  // namespace

void register_pool_ops(OpLowerings& t) {
  t["MaxPool"] = pool_op(true);
  t["AveragePool"] = pool_op(false);
}

}  // namespace tessera::halide
