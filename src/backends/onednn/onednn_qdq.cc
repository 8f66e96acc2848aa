// Recognition of QDQ groups and QLinearConv / QLinearMatMul for oneDNN's int8 primitives (see
// onednn_qdq.h).
#include "backends/onednn/onednn_qdq.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessera::onednn {
namespace {

const Value* constant(const Graph& fn, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& val = fn.value(v);
  return val.is_constant() && val.data ? &val : nullptr;
}

std::optional<std::vector<float>> floats(const Graph& fn, ValueId v) {
  const Value* c = constant(fn, v);
  if (!c || c->type.dtype != DType::f32) return std::nullopt;
  std::vector<float> out(static_cast<size_t>(c->type.numel()));
  if (!out.empty()) std::memcpy(out.data(), c->data->data(), out.size() * sizeof(float));
  return out;
}

std::optional<std::vector<int32_t>> ints(const Graph& fn, ValueId v) {
  const Value* c = constant(fn, v);
  if (!c) return std::nullopt;
  const auto n = static_cast<size_t>(c->type.numel());
  std::vector<int32_t> out(n);
  const uint8_t* p = c->data->data();
  for (size_t i = 0; i < n; ++i) {
    switch (c->type.dtype) {
      case DType::u8: out[i] = p[i]; break;
      case DType::i8: out[i] = static_cast<int8_t>(p[i]); break;
      case DType::i32: std::memcpy(&out[i], p + 4 * i, 4); break;
      default: return std::nullopt;
    }
  }
  return out;
}

// Scale (input s) and zero point (input z, optional: zeros of `dtype`) as constants.
std::optional<QuantInfo> quant_of(const Graph& fn, ValueId s, ValueId z, DType dtype) {
  auto scale = floats(fn, s);
  if (!scale || scale->empty()) return std::nullopt;
  for (float f : *scale)
    if (!(f > 0.0f) || !std::isfinite(f)) return std::nullopt;
  QuantInfo q;
  q.scale = std::move(*scale);
  q.dtype = dtype;
  if (z == kNoValue) {
    q.zero_point.assign(q.scale.size(), 0);
  } else {
    auto zp = ints(fn, z);
    if (!zp || zp->size() != q.scale.size() || fn.value(z).type.dtype != dtype) return std::nullopt;
    q.zero_point = std::move(*zp);
  }
  return q;
}

ValueId input(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : kNoValue; }

struct Matcher {
  const Graph& fn;
  const std::vector<std::vector<NodeId>>& consumers;
  std::string* why;

  std::nullopt_t refuse(const std::string& reason) const {
    if (why) *why = reason;
    return std::nullopt;
  }
  bool refused(const std::string& reason) const {
    if (why) *why = reason;
    return false;
  }
  // The node producing v inside the function, when it is `op`.
  std::optional<NodeId> producer(ValueId v, const char* op) const {
    if (v == kNoValue) return std::nullopt;
    const Value& val = fn.value(v);
    if (val.kind != ValueKind::Intermediate || val.producer == kNoNode || fn.node(val.producer).op != op) return std::nullopt;
    return val.producer;
  }
  // v is read by exactly one node, inside, and is not a function output.
  bool inner(ValueId v) const { return consumers[static_cast<size_t>(v)].size() == 1 && !fn.is_output(v); }
  std::optional<NodeId> sole(ValueId v) const {
    if (!inner(v)) return std::nullopt;
    return consumers[static_cast<size_t>(v)][0];
  }

  // The quantization a DequantizeLinear node applies (per tensor or along its axis).
  std::optional<QuantInfo> dq_quant(NodeId d, int64_t* axis) const {
    const Node& node = fn.node(d);
    const Value& data = fn.value(node.inputs[0]);
    const int64_t rank = static_cast<int64_t>(data.type.shape.size());
    int64_t a = attr_int(node.attrs, "axis", 1);
    if (a < 0) a += rank;
    if (axis) *axis = a;
    return quant_of(fn, input(node, 1), input(node, 2), data.type.dtype);
  }

  std::optional<Int8Match> qoperator(NodeId n) const {
    const Node& node = fn.node(n);
    Int8Match m;
    m.kind = node.op == "QLinearConv" ? Int8Match::Kind::conv : Int8Match::Kind::matmul;
    m.anchor = n;
    m.nodes = {n};
    m.x = node.inputs[0];
    m.w = input(node, 3);
    m.out = node.outputs[0];
    const DType xt = fn.value(m.x).type.dtype;
    auto xq = quant_of(fn, input(node, 1), input(node, 2), xt);
    auto wq = m.w != kNoValue ? quant_of(fn, input(node, 4), input(node, 5), fn.value(m.w).type.dtype) : std::nullopt;
    auto yq = quant_of(fn, input(node, 6), input(node, 7), fn.value(m.out).type.dtype);
    if (!xq || !wq || !yq) return refuse("scales or zero points that are not constants");
    m.xq = *xq;
    m.wq = *wq;
    m.yq = *yq;
    if (m.kind == Int8Match::Kind::conv && input(node, 8) != kNoValue) {
      auto b = ints(fn, input(node, 8));
      if (!b || fn.value(input(node, 8)).type.dtype != DType::i32) return refuse("a bias that is not an int32 constant");
      m.bias_acc.assign(b->begin(), b->end());
    }
    return m;
  }

  std::optional<Int8Match> qdq(NodeId n) const {
    const Node& node = fn.node(n);
    auto src_dq = producer(input(node, 0), "DequantizeLinear");
    auto w_dq = producer(input(node, 1), "DequantizeLinear");
    if (!src_dq || !w_dq) return std::nullopt;
    Int8Match m;
    m.kind = node.op == "Conv" ? Int8Match::Kind::conv : Int8Match::Kind::matmul;
    m.anchor = n;
    m.src_dq = *src_dq;
    m.x = fn.node(*src_dq).inputs[0];
    m.w = fn.node(*w_dq).inputs[0];
    if (!sole(input(node, 1))) return refuse("the weights' DequantizeLinear has other readers");
    if (!constant(fn, m.w)) return refuse("weights that are not a constant");
    int64_t x_axis = 0, w_axis = 0;
    auto xq = dq_quant(*src_dq, &x_axis);
    auto wq = dq_quant(*w_dq, &w_axis);
    if (!xq || !wq) return refuse("scales or zero points that are not constants");
    m.xq = *xq;
    m.wq = *wq;
    m.nodes = {*w_dq, n};
    // Where the weights' output channels lie, for a per-channel scale.
    const Shape& ws = fn.value(m.w).type.shape;
    int64_t channel_axis = 0;
    if (node.op == "Gemm") {
      m.trans_b = attr_int(node.attrs, "transB", 0) != 0;
      channel_axis = m.trans_b ? 0 : 1;
    } else if (node.op == "MatMul") {
      channel_axis = static_cast<int64_t>(ws.size()) - 1;
    }
    if (m.wq.scale.size() > 1 && w_axis != channel_axis) return refuse("a weight scale along another axis than the output channels");
    // Bias: a float tensor, or the DequantizeLinear of an int32 constant.
    if (const ValueId b = input(node, 2); b != kNoValue) {
      if (auto b_dq = producer(b, "DequantizeLinear")) {
        auto bq = ints(fn, fn.node(*b_dq).inputs[0]);
        int64_t b_axis = 0;
        auto bp = dq_quant(*b_dq, &b_axis);
        if (!bq || !bp || !sole(b)) return refuse("a dequantized bias that is not an int32 constant read only here");
        const size_t count = bq->size();
        m.bias_acc.resize(count);
        for (size_t c = 0; c < count; ++c) {
          const size_t k = bp->scale.size() == 1 ? 0 : c, kw = m.wq.scale.size() == 1 ? 0 : c;
          const float real = static_cast<float>((*bq)[c] - bp->zero_point[k]) * bp->scale[k];
          m.bias_acc[c] = real / (m.xq.scale[0] * m.wq.scale[kw]);
        }
        m.nodes.push_back(*b_dq);
      } else if (fn.value(b).type.dtype == DType::f32) {
        m.bias = b;
      } else {
        return refuse("a bias that is neither float nor a dequantized int32");
      }
    }
    if (!tail(node.outputs[0], m.nodes, m.clip, m.yq, m.out)) return std::nullopt;
    std::sort(m.nodes.begin(), m.nodes.end());
    return m;
  }

  // The result: [Relu | Clip] then QuantizeLinear, each the only reader of the value before it.
  bool tail(ValueId v, std::vector<NodeId>& nodes, std::optional<std::pair<float, float>>& clip, QuantInfo& yq,
            ValueId& out) const {
    auto next = sole(v);
    if (next && (fn.node(*next).op == "Relu" || fn.node(*next).op == "Clip")) {
      const Node& act = fn.node(*next);
      float lo = 0.0f, hi = INFINITY;
      if (act.op == "Clip") {
        auto bound = [&](size_t i, const char* name, float dflt) -> std::optional<float> {
          if (input(act, i) != kNoValue) {
            auto f = floats(fn, input(act, i));
            if (!f || f->size() != 1) return std::nullopt;
            return (*f)[0];
          }
          return static_cast<float>(attr_float(act.attrs, name, dflt));
        };
        auto l = bound(1, "min", -INFINITY), h = bound(2, "max", INFINITY);
        if (!l || !h) return refused("a Clip whose bounds are not constants");
        lo = *l;
        hi = *h;
      }
      clip = std::make_pair(lo, hi);
      nodes.push_back(*next);
      v = act.outputs[0];
      next = sole(v);
    }
    if (!next || fn.node(*next).op != "QuantizeLinear") return refused("its result is not quantized by one QuantizeLinear");
    const Node& q = fn.node(*next);
    auto found = quant_of(fn, input(q, 1), input(q, 2), input(q, 2) != kNoValue ? fn.value(input(q, 2)).type.dtype : DType::u8);
    if (!found) return refused("output scale or zero point that are not constants");
    yq = *found;
    out = q.outputs[0];
    nodes.push_back(*next);
    return true;
  }

  // What oneDNN 2.x takes, common to both forms.
  std::optional<Int8Match> check(Int8Match m) const {
    const Node& node = fn.node(m.anchor);
    const Shape& xs = fn.value(m.x).type.shape;
    const Shape& ws = fn.value(m.w).type.shape;
    if (m.xq.dtype != DType::u8 && m.xq.dtype != DType::i8) return refuse("a source that is not uint8 or int8");
    if (m.wq.dtype != DType::i8) return refuse("weights that are not int8 (oneDNN 2.x takes s8 weights only)");
    if (std::any_of(m.wq.zero_point.begin(), m.wq.zero_point.end(), [](int32_t z) { return z != 0; }))
      return refuse("a weight zero point other than 0");
    if (m.xq.scale.size() != 1) return refuse("a source quantized per axis");
    if (m.yq.scale.size() != 1) return refuse("a result quantized per axis");
    if (m.yq.dtype != DType::u8 && m.yq.dtype != DType::i8) return refuse("a result that is not uint8 or int8");
    int64_t channels = 0;
    if (m.kind == Int8Match::Kind::conv) {
      if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size()) return refuse("not a 1-D, 2-D or 3-D convolution");
      channels = ws[0];
    } else {
      if (xs.size() != 2 || ws.size() != 2) return refuse("a product of other rank than 2");
      if (node.op == "Gemm" && (attr_int(node.attrs, "transA", 0) != 0 || attr_float(node.attrs, "alpha", 1.0) != 1.0 ||
                                attr_float(node.attrs, "beta", 1.0) != 1.0))
        return refuse("Gemm with transA, alpha or beta");
      channels = m.trans_b ? ws[0] : ws[1];
    }
    if (m.wq.scale.size() != 1 && static_cast<int64_t>(m.wq.scale.size()) != channels)
      return refuse("a weight scale per axis of another extent than the output channels");
    if (!m.bias_acc.empty() && static_cast<int64_t>(m.bias_acc.size()) != channels) return refuse("a bias of another extent");
    if (m.bias != kNoValue && fn.value(m.bias).type.numel() != channels) return refuse("a bias of another extent");
    return m;
  }
};

}  // namespace

std::optional<QAddMatch> match_qadd(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, NodeId add) {
  const Matcher m{fn, consumers, nullptr};
  const Node& node = fn.node(add);
  if (node.op != "Add" || node.inputs.size() != 2 || node.inputs[0] == node.inputs[1]) return std::nullopt;
  auto a_dq = m.producer(node.inputs[0], "DequantizeLinear"), b_dq = m.producer(node.inputs[1], "DequantizeLinear");
  if (!a_dq || !b_dq) return std::nullopt;
  QAddMatch q;
  q.add = add;
  q.a_dq = *a_dq;
  q.b_dq = *b_dq;
  q.a = fn.node(*a_dq).inputs[0];
  q.b = fn.node(*b_dq).inputs[0];
  const Shape& shape = fn.value(node.outputs[0]).type.shape;
  if (fn.value(q.a).type.shape != shape || fn.value(q.b).type.shape != shape) return std::nullopt;
  auto aq = node_quant(fn, fn.node(*a_dq)), bq = node_quant(fn, fn.node(*b_dq));
  if (!aq || !bq) return std::nullopt;
  q.aq = *aq;
  q.bq = *bq;
  q.nodes = {add};
  if (!m.tail(node.outputs[0], q.nodes, q.clip, q.yq, q.out) || q.yq.scale.size() != 1) return std::nullopt;
  for (const QuantInfo* p : {&q.aq, &q.bq, &q.yq})
    if (p->dtype != DType::u8 && p->dtype != DType::i8) return std::nullopt;
  std::sort(q.nodes.begin(), q.nodes.end());
  return q;
}

std::optional<QuantInfo> node_quant(const Graph& fn, const Node& node, bool per_axis) {
  if (node.inputs.size() < 2) return std::nullopt;
  const bool dq = node.op == "DequantizeLinear";
  const ValueId z = input(node, 2);
  const DType t = dq ? fn.value(node.inputs[0]).type.dtype : (z != kNoValue ? fn.value(z).type.dtype : DType::u8);
  auto q = quant_of(fn, node.inputs[1], z, t);
  if (!q || (q->scale.size() != 1 && !per_axis)) return std::nullopt;
  return q;
}

std::optional<Int8Match> match_int8(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, NodeId n,
                                    std::string* why) {
  if (why) why->clear();
  const Matcher m{fn, consumers, why};
  const std::string& op = fn.node(n).op;
  std::optional<Int8Match> found;
  if (op == "QLinearConv" || op == "QLinearMatMul") found = m.qoperator(n);
  else if (op == "Conv" || op == "MatMul" || op == "Gemm") found = m.qdq(n);
  if (!found) return std::nullopt;
  return m.check(std::move(*found));
}

}  // namespace tessera::onednn
