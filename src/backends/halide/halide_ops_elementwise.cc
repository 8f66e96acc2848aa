// Elementwise and broadcast ops: one expression per output element, nothing materialized.
//
//   Relu(x)       y(i..) = max(x(i..), 0)
//   Add(a, b)     y(i..) = a(bcast_a(i..)) + b(bcast_b(i..))   numpy broadcasting: operands are
//                 aligned on their last dimension, and a dimension of extent 1 reads index 0
//
// Pow with a constant integer exponent (the exported layer norm's Pow(x, 2)) is repeated
// multiplication, as std::pow computes it exactly for negative bases; Halide's float pow is
// exp(y log x), NaN for a negative base. Clip's bounds may be constants or scalar inputs.
#include <cmath>

#include "backends/halide/halide_lowering.h"

namespace tessera::halide {
namespace {

using Halide::Expr;

using Unary = std::function<Expr(const Node&, Expr)>;

OpLowering unary(Unary f) {
  return [f](Lowering& L, const Node& n) {
    const HTensor& x = L.tensor(n.inputs.at(0));
    const ValueId y = n.outputs.at(0);
    const auto vars = index_vars(x.rank());
    L.define_output(y, vars, f(n, x.at(as_exprs(vars))));
  };
}

using Binary = std::function<Expr(Expr, Expr)>;

// A variadic broadcast op folded left to right (Add, Max, Min, Sum, ...).
OpLowering nary(Binary f, bool mean = false) {
  return [f, mean](Lowering& L, const Node& n) {
    const ValueId y = n.outputs.at(0);
    const Shape& ys = L.shape(y);
    const auto vars = index_vars(static_cast<int>(ys.size()));
    const auto idx = as_exprs(vars);
    Expr e;
    int count = 0;
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      const HTensor& t = L.tensor(in);
      if (t.shape.size() > ys.size()) unsupported(n, "operand rank exceeds the output's");
      Expr v = broadcast_at(t, idx, ys);
      e = e.defined() ? f(e, v) : v;
      ++count;
    }
    if (!e.defined()) unsupported(n, "no operands");
    if (mean) e = e / static_cast<float>(count);
    L.define_output(y, vars, e);
  };
}

// Pow: exact repeated multiplication for small constant integer exponents.
void pow_op(Lowering& L, const Node& n) {
  const ValueId e = n.inputs.at(1);
  if (L.is_constant(e) && L.fn().value(e).type.numel() == 1 && L.fn().value(e).data) {
    const double p = L.const_floats(n, e).at(0);
    if (p == std::floor(p) && std::fabs(p) <= 4) {
      nary([p](Expr a, Expr) {
        Expr r = 1.0f;
        for (int i = 0; i < static_cast<int>(std::fabs(p)); ++i) r = i == 0 ? a : r * a;
        return p < 0 ? 1.0f / r : r;
      })(L, n);
      return;
    }
    if (p == 0.5) {
      nary([](Expr a, Expr) { return Halide::sqrt(a); })(L, n);
      return;
    }
  }
  nary([](Expr a, Expr b) { return Halide::pow(a, b); })(L, n);
}

// Clip(x, min, max): bounds from inputs (opset >= 11) or attributes (opset 6).
void clip_op(Lowering& L, const Node& n) {
  const HTensor& x = L.tensor(n.inputs.at(0));
  const ValueId y = n.outputs.at(0);
  const auto vars = index_vars(x.rank());
  Expr e = x.at(as_exprs(vars));
  auto bound = [&](size_t i, const char* attr) -> Expr {
    if (L.has_input(n, i)) {
      const HTensor& b = L.tensor(n.inputs[i]);
      if (b.shape.size() != 0 && b.shape != Shape{1}) unsupported(n, "Clip bound is not a scalar");
      return b.rank() == 0 ? b.func() : b.func(0);
    }
    if (n.attrs.count(attr)) return Expr(static_cast<float>(attr_float(n.attrs, attr, 0.0)));
    return Expr();
  };
  const Expr lo = bound(1, "min"), hi = bound(2, "max");
  if (lo.defined()) e = Halide::max(e, lo);
  if (hi.defined()) e = Halide::min(e, hi);
  L.define_output(y, vars, e);
}

// PRelu(x, slope): slope broadcasts to x.
void prelu_op(Lowering& L, const Node& n) {
  nary([](Expr x, Expr s) { return Halide::select(x < 0.0f, x * s, x); })(L, n);
}

float fattr(const Node& n, const char* name, double dflt) { return static_cast<float>(attr_float(n.attrs, name, dflt)); }

Expr sigmoid(Expr x) { return 1.0f / (1.0f + Halide::exp(-x)); }

}  // namespace

void register_elementwise_ops(OpLowerings& t) {
  t["Relu"] = unary([](const Node&, Expr x) { return Halide::max(x, 0.0f); });
  t["Abs"] = unary([](const Node&, Expr x) { return Halide::abs(x); });
  t["Neg"] = unary([](const Node&, Expr x) { return -x; });
  t["Sqrt"] = unary([](const Node&, Expr x) { return Halide::sqrt(x); });
  t["Reciprocal"] = unary([](const Node&, Expr x) { return 1.0f / x; });
  t["Exp"] = unary([](const Node&, Expr x) { return Halide::exp(x); });
  t["Log"] = unary([](const Node&, Expr x) { return Halide::log(x); });
  t["Erf"] = unary([](const Node&, Expr x) { return Halide::erf(x); });
  t["Tanh"] = unary([](const Node&, Expr x) { return Halide::tanh(x); });
  t["Sin"] = unary([](const Node&, Expr x) { return Halide::sin(x); });
  t["Cos"] = unary([](const Node&, Expr x) { return Halide::cos(x); });
  t["Floor"] = unary([](const Node&, Expr x) { return Halide::floor(x); });
  t["Ceil"] = unary([](const Node&, Expr x) { return Halide::ceil(x); });
  t["Identity"] = unary([](const Node&, Expr x) { return x; });
  t["Sigmoid"] = unary([](const Node&, Expr x) { return sigmoid(x); });
  t["Softplus"] = unary([](const Node&, Expr x) { return Halide::log(1.0f + Halide::exp(x)); });
  t["Mish"] = unary([](const Node&, Expr x) { return x * Halide::tanh(Halide::log(1.0f + Halide::exp(x))); });
  t["LeakyRelu"] = unary([](const Node& n, Expr x) { return Halide::select(x < 0.0f, x * fattr(n, "alpha", 0.01), x); });
  t["Elu"] = unary([](const Node& n, Expr x) {
    return Halide::select(x < 0.0f, fattr(n, "alpha", 1.0) * (Halide::exp(x) - 1.0f), x);
  });
  t["HardSigmoid"] = unary([](const Node& n, Expr x) {
    return Halide::clamp(fattr(n, "alpha", 0.2) * x + fattr(n, "beta", 0.5), 0.0f, 1.0f);
  });
  t["HardSwish"] = unary([](const Node&, Expr x) { return x * Halide::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); });
  t["Gelu"] = unary([](const Node& n, Expr x) {
    const std::string approx = attr_string(n.attrs, "approximate", "none");
    if (approx == "tanh")
      return 0.5f * x * (1.0f + Halide::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    if (approx != "none") unsupported(n, "approximate " + approx);
    return 0.5f * x * (1.0f + Halide::erf(x * 0.70710678118f));
  });
  t["Cast"] = unary([](const Node& n, Expr x) {
    if (attr_int(n.attrs, "to", 1) != 1) unsupported(n, "Cast to a type other than f32");
    return x;
  });
  t["Clip"] = clip_op;
  t["Add"] = nary([](Expr a, Expr b) { return a + b; });
  t["Sum"] = t["Add"];
  t["Sub"] = nary([](Expr a, Expr b) { return a - b; });
  t["Mul"] = nary([](Expr a, Expr b) { return a * b; });
  t["Div"] = nary([](Expr a, Expr b) { return a / b; });
  t["Max"] = nary([](Expr a, Expr b) { return Halide::max(a, b); });
  t["Min"] = nary([](Expr a, Expr b) { return Halide::min(a, b); });
  t["Mean"] = nary([](Expr a, Expr b) { return a + b; }, /*mean=*/true);
  t["Pow"] = pow_op;
  t["PRelu"] = prelu_op;
}

}  // namespace tessera::halide
