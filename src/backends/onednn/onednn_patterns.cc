// Structural recognition of decomposed layer norm, erf-GELU, SiLU and HardSwish (see onednn_patterns.h).
#include "backends/onednn/onednn_patterns.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessera::onednn {
namespace {

struct Ctx {
  const Graph& fn;
  const std::vector<std::vector<NodeId>>& consumers;

  const Node& node(NodeId n) const { return fn.node(n); }
  // The only consumer of v, when v is an inner value: one reader, not a function output.
  std::optional<NodeId> sole(ValueId v) const {
    const auto& c = consumers[static_cast<size_t>(v)];
    if (c.size() != 1 || fn.is_output(v)) return std::nullopt;
    return c[0];
  }
  std::optional<float> scalar(ValueId v) const {
    if (v == kNoValue) return std::nullopt;
    const Value& val = fn.value(v);
    if (!val.is_constant() || !val.data || val.type.dtype != DType::f32 || val.type.numel() != 1) return std::nullopt;
    float f;
    std::memcpy(&f, val.data->data(), sizeof f);
    return f;
  }
  bool scalar_is(ValueId v, float want) const {
    auto f = scalar(v);
    return f && std::fabs(*f - want) <= 1e-4f * std::max(1.0f, std::fabs(want));
  }
  // A two-input node of op `op` reading `v`; its other operand.
  std::optional<ValueId> other(NodeId n, const char* op, ValueId v, bool v_first_only = false) const {
    const Node& nd = node(n);
    if (nd.op != op || nd.inputs.size() != 2 || nd.outputs.size() != 1 || nd.inputs[0] == nd.inputs[1]) return std::nullopt;
    if (nd.inputs[0] == v) return nd.inputs[1];
    if (nd.inputs[1] == v && !v_first_only) return nd.inputs[0];
    return std::nullopt;
  }
  ValueId out(NodeId n) const { return node(n).outputs[0]; }
  bool same_shape(ValueId a, ValueId b) const { return fn.value(a).type.shape == fn.value(b).type.shape; }
};

// A Clip of [lo, hi]: bounds as constant inputs (opset >= 11) or attributes.
bool clips_to(const Ctx& c, NodeId n, float lo, float hi) {
  const Node& nd = c.node(n);
  if (nd.op != "Clip" || nd.inputs.empty() || nd.outputs.size() != 1) return false;
  auto bound = [&](size_t i, const char* name) -> std::optional<float> {
    if (i < nd.inputs.size() && nd.inputs[i] != kNoValue) return c.scalar(nd.inputs[i]);
    if (!nd.attrs.count(name)) return std::nullopt;
    return static_cast<float>(attr_float(nd.attrs, name, 0.0));
  };
  const auto l = bound(1, "min"), h = bound(2, "max");
  return l && h && *l == lo && *h == hi;
}

// n scales its input `v` by 1/6: Div(v, 6) or Mul(v, 1/6).
bool sixth_of(const Ctx& c, NodeId n, ValueId v) {
  if (auto k = c.other(n, "Div", v, true)) return c.scalar_is(*k, 6.0f);
  if (auto k = c.other(n, "Mul", v)) return c.scalar_is(*k, 1.0f / 6.0f);
  return false;
}

// A mean over the last axis only, keepdims: ReduceMean(axes = [-1]), or the GlobalAveragePool
// of a rank-3 [N, C, L] value, whose one spatial axis is the last (import's simplify_graph writes
// a ReduceMean over axis 2 of a rank-3 value as that pool: every transformer's layer norm over
// [1, S, H]).
bool mean_over_last(const Ctx& c, NodeId n) {
  const Node& nd = c.node(n);
  if (nd.inputs.empty() || nd.outputs.size() != 1) return false;
  if (nd.op == "GlobalAveragePool") return c.fn.value(nd.inputs[0]).type.shape.size() == 3;
  if (nd.op != "ReduceMean") return false;
  const auto rank = static_cast<int64_t>(c.fn.value(nd.inputs[0]).type.shape.size());
  if (rank < 1 || attr_int(nd.attrs, "keepdims", 1) != 1) return false;
  std::vector<int64_t> axes = attr_ints(nd.attrs, "axes");
  if (nd.inputs.size() > 1 && nd.inputs[1] != kNoValue) {   // opset 18: axes as an input
    const Value& a = c.fn.value(nd.inputs[1]);
    if (!a.is_constant() || !a.data || a.type.dtype != DType::i64) return false;
    axes.resize(static_cast<size_t>(a.type.numel()));
    if (!axes.empty()) std::memcpy(axes.data(), a.data->data(), axes.size() * sizeof(int64_t));   // empty: no pointer
  }
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

// n squares d: Pow(d, 2) or Mul(d, d).
bool squares(const Ctx& c, NodeId n, ValueId d) {
  const Node& nd = c.node(n);
  if (nd.op == "Mul") return nd.inputs.size() == 2 && nd.outputs.size() == 1 && nd.inputs[0] == d && nd.inputs[1] == d;
  auto two = c.other(n, "Pow", d, true);
  return two && c.scalar_is(*two, 2.0f);
}

// v is a vector along x's last axis ([inner] or [1, ..., inner]).
bool last_axis_vector(const Ctx& c, ValueId v, ValueId x) {
  const Shape& xs = c.fn.value(x).type.shape;
  const Shape& vs = c.fn.value(v).type.shape;
  return !vs.empty() && vs.size() <= xs.size() && vs.back() == xs.back() && c.fn.value(v).type.numel() == xs.back() &&
         c.fn.value(v).type.dtype == DType::f32;
}

}  // namespace

std::optional<LayerNormMatch> match_layer_norm(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers,
                                               NodeId mean) {
  const Ctx c{fn, consumers};
  if (!mean_over_last(c, mean)) return std::nullopt;
  LayerNormMatch m;
  m.x = c.node(mean).inputs[0];
  auto sub = c.sole(c.out(mean));
  if (!sub || c.other(*sub, "Sub", c.out(mean)) != m.x || c.node(*sub).inputs[0] != m.x) return std::nullopt;
  const ValueId d = c.out(*sub);
  if (!c.same_shape(d, m.x) || fn.is_output(d) || consumers[static_cast<size_t>(d)].size() != 2) return std::nullopt;
  NodeId pow = consumers[static_cast<size_t>(d)][0], div = consumers[static_cast<size_t>(d)][1];
  if (c.node(pow).op != "Pow" && !squares(c, pow, d)) std::swap(pow, div);
  if (!squares(c, pow, d)) return std::nullopt;
  auto mean2 = c.sole(c.out(pow));
  if (!mean2 || !mean_over_last(c, *mean2)) return std::nullopt;
  auto add = c.sole(c.out(*mean2));
  std::optional<ValueId> eps = add ? c.other(*add, "Add", c.out(*mean2)) : std::nullopt;
  if (!eps || !c.scalar(*eps)) return std::nullopt;
  m.eps = *c.scalar(*eps);
  auto sqrt = c.sole(c.out(*add));
  if (!sqrt || c.node(*sqrt).op != "Sqrt") return std::nullopt;
  auto div2 = c.sole(c.out(*sqrt));
  if (!div2 || *div2 != div || c.other(div, "Div", d, true) != c.out(*sqrt)) return std::nullopt;
  m.nodes = {mean, *sub, pow, *mean2, *add, *sqrt, div};
  m.out = c.out(div);
  if (auto mul = c.sole(m.out)) {
    auto g = c.other(*mul, "Mul", m.out);
    if (g && last_axis_vector(c, *g, m.x) && c.same_shape(c.out(*mul), m.x)) {
      m.gamma = *g;
      m.nodes.push_back(*mul);
      m.out = c.out(*mul);
      if (auto plus = c.sole(m.out)) {
        auto b = c.other(*plus, "Add", m.out);
        if (b && last_axis_vector(c, *b, m.x) && c.same_shape(c.out(*plus), m.x)) {
          m.beta = *b;
          m.nodes.push_back(*plus);
          m.out = c.out(*plus);
        }
      }
    }
  }
  std::sort(m.nodes.begin(), m.nodes.end());
  return m;
}

std::optional<UnaryMatch> match_gelu(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, ValueId x) {
  const Ctx c{fn, consumers};
  const auto& xc = consumers[static_cast<size_t>(x)];
  if (xc.size() != 2) return std::nullopt;
  for (int first = 0; first < 2; ++first) {
    const NodeId scale = xc[static_cast<size_t>(first)], x2 = xc[static_cast<size_t>(1 - first)];
    auto k = c.other(scale, "Div", x, true);
    const bool by_div = k && c.scalar_is(*k, std::sqrt(2.0f));
    if (!by_div && !((k = c.other(scale, "Mul", x)) && c.scalar_is(*k, std::sqrt(0.5f)))) continue;
    auto erf = c.sole(c.out(scale));
    if (!erf || c.node(*erf).op != "Erf") continue;
    auto add = c.sole(c.out(*erf));
    std::optional<ValueId> one = add ? c.other(*add, "Add", c.out(*erf)) : std::nullopt;
    if (!one || !c.scalar_is(*one, 1.0f)) continue;
    const ValueId a = c.out(*add);
    auto xo = c.other(x2, "Mul", x);
    if (!xo) continue;
    UnaryMatch m;
    m.kind = UnaryMatch::Kind::gelu_erf;
    m.x = x;
    if (*xo == a) {                                             // (x * (1 + erf)) * 0.5
      if (c.sole(a) != x2) continue;
      auto half = c.sole(c.out(x2));
      auto h = half ? c.other(*half, "Mul", c.out(x2)) : std::nullopt;
      if (!h || !c.scalar_is(*h, 0.5f)) continue;
      m.nodes = {scale, *erf, *add, x2, *half};
      m.out = c.out(*half);
    } else if (c.scalar_is(*xo, 0.5f)) {                        // (x * 0.5) * (1 + erf)
      auto last = c.sole(c.out(x2));
      if (!last || c.sole(a) != last || c.other(*last, "Mul", c.out(x2)) != a) continue;
      m.nodes = {scale, *erf, *add, x2, *last};
      m.out = c.out(*last);
    } else {                                                    // x * ((1 + erf) * 0.5)
      auto half = c.sole(a);
      auto h = half ? c.other(*half, "Mul", a) : std::nullopt;
      if (!h || !c.scalar_is(*h, 0.5f) || c.out(*half) != *xo || c.sole(*xo) != x2) continue;
      m.nodes = {scale, *erf, *add, *half, x2};
      m.out = c.out(x2);
    }
    if (!c.same_shape(m.out, x)) continue;
    std::sort(m.nodes.begin(), m.nodes.end());
    return m;
  }
  return std::nullopt;
}

std::optional<UnaryMatch> match_swish(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, ValueId x) {
  const Ctx c{fn, consumers};
  const auto& xc = consumers[static_cast<size_t>(x)];
  if (xc.size() != 2 || fn.value(x).type.dtype != DType::f32) return std::nullopt;
  for (int first = 0; first < 2; ++first) {
    const NodeId sig = xc[static_cast<size_t>(first)], mul = xc[static_cast<size_t>(1 - first)];
    const Node& s = c.node(sig);
    if (s.op != "Sigmoid" || s.inputs.size() != 1 || s.outputs.size() != 1 || c.sole(c.out(sig)) != mul) continue;
    if (c.other(mul, "Mul", x) != c.out(sig) || !c.same_shape(c.out(mul), x)) continue;
    UnaryMatch m;
    m.kind = UnaryMatch::Kind::swish;
    m.x = x;
    m.nodes = {std::min(sig, mul), std::max(sig, mul)};
    m.out = c.out(mul);
    return m;
  }
  return std::nullopt;
}

std::optional<UnaryMatch> match_hardswish(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, ValueId x) {
  const Ctx c{fn, consumers};
  const auto& xc = consumers[static_cast<size_t>(x)];
  if (xc.size() != 2 || fn.value(x).type.dtype != DType::f32) return std::nullopt;
  UnaryMatch m;
  m.kind = UnaryMatch::Kind::hardswish;
  m.x = x;
  for (int first = 0; first < 2; ++first) {
    const NodeId gate = xc[static_cast<size_t>(first)], mul = xc[static_cast<size_t>(1 - first)];
    // The gate, Clip(x + 3, 0, 6) [/ 6] or HardSigmoid(x) with alpha 1/6, beta 0.5, read by mul.
    std::vector<NodeId> nodes{gate, mul};
    ValueId g = kNoValue;
    bool scaled = false;
    const Node& gn = c.node(gate);
    if (gn.op == "HardSigmoid" && gn.inputs.size() == 1 && gn.outputs.size() == 1) {
      if (std::fabs(attr_float(gn.attrs, "alpha", 0.2) - 1.0 / 6.0) > 1e-6 || attr_float(gn.attrs, "beta", 0.5) != 0.5) continue;
      g = c.out(gate);
      scaled = true;
    } else {
      auto three = c.other(gate, "Add", x);
      auto clip = three && c.scalar_is(*three, 3.0f) ? c.sole(c.out(gate)) : std::nullopt;
      if (!clip || !clips_to(c, *clip, 0.0f, 6.0f)) continue;
      nodes.push_back(*clip);
      g = c.out(*clip);
      if (auto div = c.sole(g); div && *div != mul && sixth_of(c, *div, g)) {   // x * (Clip(..) / 6)
        nodes.push_back(*div);
        g = c.out(*div);
        scaled = true;
      }
    }
    if (c.sole(g) != mul || c.other(mul, "Mul", x) != g) continue;
    m.out = c.out(mul);
    if (!scaled) {   // (x * Clip(..)) / 6
      auto div = c.sole(m.out);
      if (!div || !sixth_of(c, *div, m.out)) continue;
      nodes.push_back(*div);
      m.out = c.out(*div);
    }
    if (!c.same_shape(m.out, x)) continue;
    std::sort(nodes.begin(), nodes.end());
    m.nodes = std::move(nodes);
    return m;
  }
  return std::nullopt;
}

}  // namespace tessera::onednn
