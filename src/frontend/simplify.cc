// Graph simplification at import (see simplify.h).
#include "frontend/simplify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <map>
#include <set>

#include "tessera/attribute.h"
#include "ir/boundary_layout.h"
#include "frontend/constant_folding.h"

namespace tessera {
namespace {

bool is(const Node& n, const char* op) { return n.op == op && n.domain.empty(); }

std::vector<float> floats_of(const Value& v) {
  std::vector<float> out(static_cast<size_t>(v.type.numel()));
  if (!out.empty()) std::memcpy(out.data(), v.data->data(), out.size() * sizeof(float));   // empty: no pointer
  return out;
}

TensorData bytes_of(const std::vector<float>& x) {
  auto b = std::make_shared<TensorBytes>(x.size() * sizeof(float));
  std::memcpy(b->data(), x.data(), b->size());
  return b;
}

class Simplifier {
 public:
  explicit Simplifier(Graph& g) : g_(g), cons_(g.consumers()), dead_(g.nodes.size(), 0) {
    for (const Value& v : g.values) names_.insert(v.name);
  }

  SimplifyReport run() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (NodeId n = 0; n < g_.num_nodes(); ++n) {
        if (dead_[n]) continue;
        if (remove_no_op(n) || cancel_transpose_pair(n) || fold_bias_add(n) || fold_batch_norm(n) || spatial_mean(n))
          progress = true;
      }
    }
    if (report_.changed()) compact();
    return std::move(report_);
  }

 private:
  Graph& g_;
  std::vector<std::vector<NodeId>> cons_;   // live consumers per value
  std::vector<char> dead_;
  std::set<std::string> names_;
  SimplifyReport report_;
  std::map<NodeId, Node> after_;   // nodes added, each emitted right after the node keyed (compact)

  bool live_intermediate(ValueId v) const {
    return v != kNoValue && g_.value(v).kind == ValueKind::Intermediate && !g_.is_output(v);
  }
  bool constant_f32(ValueId v) const {
    return v != kNoValue && g_.value(v).is_constant() && g_.value(v).type.dtype == DType::f32;
  }

  void kill(NodeId n) {
    dead_[n] = 1;
    for (ValueId in : g_.node(n).inputs)
      if (in != kNoValue) std::erase(cons_[in], n);
  }

  // Every live reader of `from` reads `to` instead. A graph output keeps its name: `to` takes it,
  // which only an intermediate that is no graph output yet can do; otherwise nothing changes.
  bool forward(ValueId from, ValueId to) {
    if (g_.is_output(from)) {
      if (!live_intermediate(to)) return false;
      g_.value(to).name = g_.value(from).name;
      std::replace(g_.outputs.begin(), g_.outputs.end(), from, to);
    }
    for (NodeId c : cons_[from]) {
      for (ValueId& in : g_.nodes[c].inputs)
        if (in == from) in = to;
      if (std::find(cons_[to].begin(), cons_[to].end(), c) == cons_[to].end()) cons_[to].push_back(c);
    }
    std::sort(cons_[to].begin(), cons_[to].end());
    cons_[from].clear();
    return true;
  }

  bool is_no_op(const Node& n) const {
    if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] == kNoValue) return false;
    if (!(g_.value(n.inputs[0]).type == g_.value(n.outputs[0]).type)) return false;
    if (is(n, "Identity") || is(n, "Dropout")) return true;
    if (is(n, "Reshape") || is(n, "Flatten") || is(n, "Squeeze") || is(n, "Unsqueeze")) return true;
    if (is(n, "Pad")) return pads_all_zero(n);
    if (is(n, "Transpose")) {
      std::vector<int64_t> perm = attr_ints(n.attrs, "perm");
      for (size_t i = 0; i < perm.size(); ++i)
        if (perm[i] != static_cast<int64_t>(i)) return false;
      return !perm.empty() || g_.value(n.inputs[0]).type.rank() <= 1;
    }
    return false;
  }

  // A Pad whose pads (the constant second input, or the attribute before opset 11) are all 0:
  // torch exports AvgPool2d as one in front of AveragePool (DenseNet's transitions), and oneDNN
  // and XNNPACK then ran the pool in a partition of its own beside ref's copy.
  bool pads_all_zero(const Node& n) const {
    const bool attribute = n.inputs.size() < 2 || n.inputs[1] == kNoValue;
    const std::optional<std::vector<int64_t>> pads =
        attribute ? attr_ints(n.attrs, "pads") : detail::constant_ints(g_, n.inputs[1]);
    return pads && std::all_of(pads->begin(), pads->end(), [](int64_t p) { return p == 0; });
  }

  bool remove_no_op(NodeId id) {
    const Node& n = g_.node(id);
    if (!is_no_op(n) || !forward(n.outputs[0], n.inputs[0])) return false;
    report_.removed.push_back(n.name);
    kill(id);
    return true;
  }

  // ReduceMean over every spatial axis of an [N, C, ...] f32 value (axes {2, ..., r-1}, as an
  // attribute or, from opset 18, a constant input) is a GlobalAveragePool, which oneDNN, XNNPACK
  // and Halide run inside their functions; as a ReduceMean only ref, eigen and halide took it, and
  // torch's `x.mean([2, 3])` (MNASNet's and ShuffleNet's heads) ran on ref behind a layout
  // conversion. keepdims=0 adds a Flatten of the pooled [N, C, 1, 1], named after the node.
  bool spatial_mean(NodeId id) {
    Node& n = g_.nodes[id];
    if (!is(n, "ReduceMean") || n.inputs.empty() || n.inputs[0] == kNoValue || n.outputs.size() != 1) return false;
    const TensorType& xt = g_.value(n.inputs[0]).type;
    const size_t rank = xt.rank();
    if (xt.dtype != DType::f32 || rank < 3) return false;
    std::optional<std::vector<int64_t>> axes;
    if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) axes = detail::constant_ints(g_, n.inputs[1]);
    else if (n.attrs.count("axes")) axes = attr_ints(n.attrs, "axes");
    if (!axes || attr_int(n.attrs, "noop_with_empty_axes", 0) != 0) return false;
    std::vector<int64_t> want;
    for (int64_t& a : *axes) a = a < 0 ? a + static_cast<int64_t>(rank) : a;
    std::sort(axes->begin(), axes->end());
    for (size_t a = 2; a < rank; ++a) want.push_back(static_cast<int64_t>(a));
    if (*axes != want) return false;
    const bool keepdims = attr_int(n.attrs, "keepdims", 1) != 0;
    const ValueId x = n.inputs[0], y = n.outputs[0];
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] != kNoValue) std::erase(cons_[n.inputs[i]], id);
    n.op = "GlobalAveragePool";
    n.attrs.clear();
    n.inputs = {x};
    report_.rewritten.push_back(n.name);
    if (keepdims) return true;
    Shape pooled(xt.shape.begin(), xt.shape.begin() + 2);
    pooled.resize(rank, 1);
    std::string name = g_.value(y).name + "_pooled";
    for (int k = 2; names_.count(name); ++k) name = g_.value(y).name + "_pooled_" + std::to_string(k);
    names_.insert(name);
    const ValueId p = g_.add_value(Value{.name = name, .type = TensorType{DType::f32, pooled}, .kind = ValueKind::Intermediate});
    cons_.emplace_back();
    g_.nodes[id].outputs = {p};
    g_.value(p).producer = id;
    std::string flat = g_.nodes[id].name + "/flatten";
    while (names_.count(flat)) flat += "_";
    names_.insert(flat);
    after_[id] = Node{.name = flat, .op = "Flatten", .domain = "", .attrs = {{"axis", int64_t(1)}}, .inputs = {p}, .outputs = {y}};
    cons_[p].push_back(id);   // a live reader (the Flatten), so no pass takes p for dead
    return true;
  }

  // Transpose(Transpose(x, p1), p2) with p1[p2[i]] == i: readers of the outer one read x; the
  // inner one goes too when nothing else reads it.
  bool cancel_transpose_pair(NodeId id) {
    const Node& outer = g_.node(id);
    if (!is(outer, "Transpose") || outer.inputs.size() != 1 || !live_intermediate(outer.inputs[0])) return false;
    NodeId inner_id = g_.value(outer.inputs[0]).producer;
    if (inner_id == kNoNode || dead_[inner_id]) return false;
    const Node& inner = g_.node(inner_id);
    if (!is(inner, "Transpose") || inner.inputs.size() != 1) return false;
    std::vector<int64_t> p1 = attr_ints(inner.attrs, "perm"), p2 = attr_ints(outer.attrs, "perm");
    if (p1.empty() || p1.size() != p2.size()) return false;
    for (size_t i = 0; i < p2.size(); ++i)
      if (p2[i] < 0 || p2[i] >= static_cast<int64_t>(p1.size()) || p1[static_cast<size_t>(p2[i])] != static_cast<int64_t>(i))
        return false;
    if (!forward(outer.outputs[0], inner.inputs[0])) return false;
    report_.removed.push_back(outer.name);
    kill(id);
    if (cons_[inner.outputs[0]].empty()) {
      report_.removed.push_back(inner.name);
      kill(inner_id);
    }
    return true;
  }

  ValueId add_constant(const std::string& base, TensorType type, TensorData data) {
    std::string name = base;
    for (int k = 2; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    ValueId v = g_.add_value(Value{.name = name, .type = std::move(type), .kind = ValueKind::Constant, .data = std::move(data)});
    cons_.emplace_back();
    return v;
  }

  // A Conv or ConvTranspose whose only output `x` is read by exactly one node, with a constant
  // f32 weight and an optional per-channel constant bias: a site a per-channel affine op folds into.
  struct ConvSite {
    NodeId conv = kNoNode;
    ValueId w = kNoValue, b = kNoValue;
    int64_t channels = 0, group = 1;
    bool transposed = false;
  };

  bool per_channel(ValueId v, int64_t m) const { return constant_f32(v) && g_.value(v).type.shape == Shape{m}; }

  std::optional<ConvSite> conv_feeding(ValueId x) const {
    if (!live_intermediate(x) || cons_[x].size() != 1) return std::nullopt;
    ConvSite site;
    site.conv = g_.value(x).producer;
    if (site.conv == kNoNode || dead_[site.conv]) return std::nullopt;
    const Node& conv = g_.node(site.conv);
    site.transposed = is(conv, "ConvTranspose");
    if (!(is(conv, "Conv") || site.transposed) || conv.outputs.size() != 1 || conv.inputs.size() < 2) return std::nullopt;
    site.w = conv.inputs[1];
    site.b = conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue;
    const TensorType& xt = g_.value(x).type;
    if (!constant_f32(site.w) || g_.value(site.w).type.rank() < 3 || xt.rank() < 2) return std::nullopt;
    site.channels = xt.shape[1];
    if (site.b != kNoValue && !per_channel(site.b, site.channels)) return std::nullopt;
    const Shape& ws = g_.value(site.w).type.shape;
    site.group = attr_int(conv.attrs, "group", 1);
    if (site.group <= 0) return std::nullopt;
    if (site.transposed ? (ws[1] * site.group != site.channels || ws[0] % site.group != 0) : ws[0] != site.channels)
      return std::nullopt;
    return site;
  }

  // The convolution reads weight w2 and bias b2 and writes y (the folded op's output) instead.
  void rewire(const ConvSite& site, ValueId w2, ValueId b2, ValueId y) {
    Node& c = g_.nodes[site.conv];
    for (ValueId in : c.inputs)
      if (in != kNoValue) std::erase(cons_[in], site.conv);
    c.inputs.resize(3);
    c.inputs[1] = w2;
    c.inputs[2] = b2;
    for (ValueId in : c.inputs) cons_[in].push_back(site.conv);
    c.outputs[0] = y;
    g_.value(y).producer = site.conv;
  }

  std::vector<float> bias_of(const ConvSite& site) const {
    return site.b == kNoValue ? std::vector<float>(static_cast<size_t>(site.channels), 0.0f) : floats_of(g_.value(site.b));
  }
  bool has_data(ValueId v) const { return v == kNoValue || g_.value(v).data != nullptr; }

  bool fold_batch_norm(NodeId id) {
    const Node& bn = g_.node(id);
    if (!is(bn, "BatchNormalization") || bn.outputs.size() != 1 || bn.inputs.size() != 5) return false;
    const std::optional<ConvSite> site = conv_feeding(bn.inputs[0]);
    if (!site) return false;
    const int64_t m = site->channels;
    for (size_t i = 1; i < 5; ++i)
      if (!per_channel(bn.inputs[i], m)) return false;
    bool data = has_data(site->w) && has_data(site->b);
    for (size_t i = 1; i < 5; ++i) data = data && has_data(bn.inputs[i]);
    TensorData w_data, b_data;
    if (data) {
      std::vector<float> scale = floats_of(g_.value(bn.inputs[1])), beta = floats_of(g_.value(bn.inputs[2]));
      std::vector<float> mean = floats_of(g_.value(bn.inputs[3])), var = floats_of(g_.value(bn.inputs[4]));
      const double eps = attr_float(bn.attrs, "epsilon", 1e-5);
      std::vector<float> s(static_cast<size_t>(m)), bias = bias_of(*site);
      for (size_t c = 0; c < s.size(); ++c) {
        s[c] = static_cast<float>(scale[c] / std::sqrt(static_cast<double>(var[c]) + eps));
        bias[c] = (bias[c] - mean[c]) * s[c] + beta[c];
      }
      std::vector<float> wt = floats_of(g_.value(site->w));
      // Conv: W[M, C/g, k...]; ConvTranspose: W[C, M/g, k...], output channel (c / (C/g)) * M/g + j.
      const Shape& ws = g_.value(site->w).type.shape;
      const int64_t d0 = ws[0], d1 = ws[1], k = static_cast<int64_t>(wt.size()) / (d0 * d1);
      for (int64_t i = 0; i < d0; ++i)
        for (int64_t j = 0; j < d1; ++j) {
          const int64_t oc = site->transposed ? (i / (d0 / site->group)) * d1 + j : i;
          float* p = wt.data() + (i * d1 + j) * k;
          for (int64_t e = 0; e < k; ++e) p[e] *= s[static_cast<size_t>(oc)];
        }
      w_data = bytes_of(wt);
      b_data = bytes_of(bias);
    }
    const ValueId w2 = add_constant(bn.name + "/folded_W", g_.value(site->w).type, w_data);
    const ValueId b2 = add_constant(bn.name + "/folded_B", TensorType{DType::f32, {m}}, b_data);
    report_.folded.push_back(bn.name);
    kill(id);
    rewire(*site, w2, b2, bn.outputs[0]);
    return true;
  }

  // Add(conv, c) where the constant c varies along the channel axis only (shape [M,1,1], [1,M,1,1],
  // a scalar...; exporters write a convolution's bias this way): c joins the convolution's bias.
  bool fold_bias_add(NodeId id) {
    const Node& add = g_.node(id);
    if (!is(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
    for (int side = 0; side < 2; ++side) {
      const ValueId x = add.inputs[side], c = add.inputs[1 - side];
      if (!constant_f32(c) || c == x) continue;
      const std::optional<ConvSite> site = conv_feeding(x);
      if (!site || !(g_.value(add.outputs[0]).type == g_.value(x).type)) continue;
      const Shape& cs = g_.value(c).type.shape;
      const int xr = g_.value(x).type.rank(), cr = static_cast<int>(cs.size());
      bool channel_only = cr <= xr;
      for (int j = 0; j < cr && channel_only; ++j)
        channel_only = cs[j] == 1 || (xr - cr + j == 1 && cs[j] == site->channels);
      if (!channel_only) continue;
      TensorData b_data;
      if (has_data(site->b) && has_data(c)) {
        std::vector<float> bias = bias_of(*site), cv = floats_of(g_.value(c));
        for (size_t k = 0; k < bias.size(); ++k) bias[k] += cv.size() == 1 ? cv[0] : cv[k];
        b_data = bytes_of(bias);
      }
      const ValueId b2 = add_constant(add.name + "/folded_B", TensorType{DType::f32, {site->channels}}, b_data);
      report_.folded.push_back(add.name);
      kill(id);
      rewire(*site, site->w, b2, add.outputs[0]);
      return true;
    }
    return false;
  }

  // A graph of the live nodes and the values they, the inputs and the outputs use; ids renumbered
  // in their old order.
  void compact() {
    std::vector<char> used(g_.values.size(), 0);
    for (ValueId v : g_.inputs) used[v] = 1;
    for (ValueId v : g_.outputs) used[v] = 1;
    for (NodeId n = 0; n < g_.num_nodes(); ++n)
      if (!dead_[n]) {
        for (ValueId v : g_.node(n).inputs)
          if (v != kNoValue) used[v] = 1;
        for (ValueId v : g_.node(n).outputs) used[v] = 1;
        if (auto a = after_.find(n); a != after_.end())
          for (ValueId v : a->second.outputs) used[v] = 1;
      }
    Graph out;
    out.name = g_.name;
    out.source = g_.source;
    out.opset = g_.opset;
    std::vector<ValueId> id(g_.values.size(), kNoValue);
    for (size_t v = 0; v < g_.values.size(); ++v)
      if (used[v]) {
        Value val = std::move(g_.values[v]);
        val.producer = kNoNode;
        id[v] = out.add_value(std::move(val));
      }
    auto remap = [&](std::vector<ValueId>& ids) {
      for (ValueId& v : ids)
        if (v != kNoValue) v = id[v];
    };
    out.inputs = g_.inputs;
    out.outputs = g_.outputs;
    remap(out.inputs);
    remap(out.outputs);
    for (NodeId n = 0; n < g_.num_nodes(); ++n)
      if (!dead_[n]) {
        Node node = std::move(g_.nodes[n]);
        remap(node.inputs);
        remap(node.outputs);
        out.add_node(std::move(node));
        if (auto a = after_.find(n); a != after_.end()) {
          Node added = std::move(a->second);
          remap(added.inputs);
          remap(added.outputs);
          out.add_node(std::move(added));
        }
      }
    g_ = std::move(out);
  }
};

}  // namespace

std::string SimplifyReport::summary() const {
  std::string s;
  auto add = [&](size_t n, const char* one, const char* many) {
    if (n == 0) return;
    s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + (n == 1 ? one : many);
  };
  add(removed.size(), "no-op node removed", "no-op nodes removed");
  add(folded.size(), "node folded into a convolution", "nodes folded into convolutions");
  add(rewritten.size(), "spatial ReduceMean made a GlobalAveragePool", "spatial ReduceMeans made GlobalAveragePools");
  return s.empty() ? "nothing to simplify" : s;
}

SimplifyReport simplify_graph(Graph& g) {
  SimplifyReport report = Simplifier(g).run();
  if (report.changed()) mark_feature_maps(g);   // of the graph as it now is (boundary_layout.h)
  return report;
}

}  // namespace tessera
