// int8 plans as QDQ ONNX models (qdq_model.h).
#include "emit/qdq_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "backends/compilers/backend_compiler.h"
#include "backends/onednn/onednn_act_quant.h"
#include "emit/graph_edit.h"
#include "frontend/onnx_export.h"
#include "ir/calibrated_ranges.h"
#include "partition/dataflow_index.h"
#include "backends/kernel.h"
#include "partition/sub_graph.h"
#include "tessera/error.h"

namespace tessera {

namespace {

using onednn::ActQuant;

// u8 scale and zero point of a range, as the int8 variant computes them (onednn_act_quant.h).
std::optional<ActQuant> act_quant(std::pair<float, float> range) { return onednn::u8_quant(range); }

// A MatMul whose right operand is computed and ranged: both operands quantized per tensor
// (onednn_int8_act_matmul.cc).
bool computed_right_operand(const Graph& g, const Node& n, const std::map<std::string, std::pair<float, float>>& ranges) {
  const Value& w = g.value(n.inputs[1]);
  const auto r = ranges.find(w.name);
  return n.op == "MatMul" && n.inputs.size() == 2 && !w.is_constant() && w.type.dtype == DType::f32 && r != ranges.end() &&
         onednn::s8_quant(r->second) && w.type.shape.size() >= 2 && g.value(n.inputs[0]).type.shape.size() >= 2;
}

// The weight's channel axis for an anchor (see the header), or -1 when it is not an anchor's.
int weight_axis(const Node& n) {
  if (n.op == "Conv") return 0;
  if (n.op == "MatMul") return 1;
  return attr_int(n.attrs, "transB", 0) != 0 ? 0 : 1;   // Gemm
}

bool is_anchor(const Graph& g, const Node& n, const std::map<std::string, std::pair<float, float>>& ranges) {
  if (n.op != "Conv" && n.op != "MatMul" && n.op != "Gemm") return false;
  if (!n.domain.empty() || n.inputs.size() < 2 || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue) return false;
  const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
  const auto r = ranges.find(x.name);
  if (r == ranges.end() || !act_quant(r->second) || x.is_constant() || x.type.dtype != DType::f32) return false;
  if (computed_right_operand(g, n, ranges)) return true;
  if (!w.is_constant() || w.type.dtype != DType::f32) return false;
  // The bias (Conv's B, Gemm's C) must not be computed: the variant builds such an anchor in f32.
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue && g.value(n.inputs[2]).kind == ValueKind::Intermediate) return false;
  if (n.op == "Conv") return x.type.shape.size() == 4 && w.type.shape.size() == 4;
  if (w.type.shape.size() != 2) return false;
  if (n.op == "MatMul") return x.type.shape.size() >= 2;
  if (attr_float(n.attrs, "alpha", 1.0) != 1.0) return false;
  const bool has_c = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
  return !has_c || attr_float(n.attrs, "beta", 1.0) == 1.0;
}

std::map<std::string, std::pair<float, float>> range_map(const PlanQuantization& q) {
  return {q.ranges.begin(), q.ranges.end()};
}

template <typename T>
TensorData bytes_of(const std::vector<T>& v) {
  auto out = std::make_shared<TensorBytes>(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out->data(), v.data(), out->size());
  return out;
}

// Builds the quantized graph: values are appended with names unique in the model.
class QdqBuilder {
 public:
  QdqBuilder(const Graph& g) : in_(g) {
    out_.name = g.name;
    out_.source = g.source;
    out_.opset = g.opset;
    out_.values = g.values;
    out_.inputs = g.inputs;
    out_.outputs = g.outputs;
    for (const Value& v : g.values) names_.insert(v.name);
    for (const Node& n : g.nodes) names_.insert(n.name);
  }

  void copy(const Node& n) { out_.add_node(n); }

  // Adds the anchor `n` with its source and weight read through DequantizeLinear; a computed
  // right operand (`right`: its s8 quantization) per tensor instead of per channel.
  // `shift`, where not empty, is the anchor's int8 bias shift: y = anchor(...) - shift per channel.
  void quantize(const Node& n, const ActQuant& q, std::optional<ActQuant> right, const std::vector<float>& shift) {
    Node node = n;
    node.inputs[0] = dequantized_source(n.inputs[0], q);
    node.inputs[1] = right ? dequantized_s8(n.inputs[1], *right) : dequantized_weight(n.inputs[1], weight_axis(n));
    if (shift.empty()) {
      out_.add_node(std::move(node));
      return;
    }
    const ValueId y = n.outputs[0];
    const Value& yv = in_.value(y);
    Value raw;
    raw.name = unique(yv.name + "_uncorrected");
    raw.type = yv.type;
    const ValueId uncorrected = out_.add_value(std::move(raw));
    node.outputs[0] = uncorrected;
    out_.add_node(std::move(node));
    // Channels on axis 1 of a Conv's output ([C, 1, ...] broadcasts there), the last axis otherwise.
    Shape s{static_cast<int64_t>(shift.size())};
    if (n.op == "Conv") s.resize(yv.type.shape.size() - 1, 1);
    const ValueId k = constant(yv.name + "_bias_shift", TensorType{DType::f32, s}, bytes_of(shift));
    Node sub;
    sub.name = unique(n.name + "_bias_correction");
    sub.op = "Sub";
    sub.inputs = {uncorrected, k};
    sub.outputs = {y};
    out_.add_node(std::move(sub));
  }

  Graph finish() { return emit_detail::compact(out_); }

 private:
  std::string unique(const std::string& want) {
    std::string name = want;
    for (int k = 1; names_.count(name); ++k) name = want + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  ValueId constant(const std::string& name, TensorType type, TensorData data) {
    Value v;
    v.name = unique(name);
    v.type = std::move(type);
    v.kind = ValueKind::Constant;
    v.data = std::move(data);
    return out_.add_value(std::move(v));
  }

  ValueId node(const std::string& op, const std::string& base, std::vector<ValueId> inputs, TensorType type, Attributes attrs = {}) {
    Value v;
    v.name = unique(base);
    v.type = std::move(type);
    const ValueId out = out_.add_value(std::move(v));
    Node n;
    n.name = unique(base + "_" + op);
    n.op = op;
    n.attrs = std::move(attrs);
    n.inputs = std::move(inputs);
    n.outputs = {out};
    out_.add_node(std::move(n));
    return out;
  }

  // x ─Q─▶ u8 ─DQ─▶ f32, once per value: every int8 anchor reading x reads the same DQ.
  ValueId dequantized_source(ValueId x, const ActQuant& q) {
    if (auto it = sources_.find(x); it != sources_.end()) return it->second;
    const Value& xv = in_.value(x);
    const ValueId scale = constant(xv.name + "_scale", TensorType{DType::f32, {}}, bytes_of(std::vector<float>{q.scale}));
    const ValueId zero = constant(xv.name + "_zero_point", TensorType{DType::u8, {}}, bytes_of(std::vector<uint8_t>{static_cast<uint8_t>(q.zero_point)}));
    const ValueId xq = node("QuantizeLinear", xv.name + "_quantized", {x, scale, zero}, TensorType{DType::u8, xv.type.shape});
    const ValueId xd = node("DequantizeLinear", xv.name + "_dequantized", {xq, scale, zero}, xv.type);
    return sources_[x] = xd;
  }

  // x ─Q─▶ s8 ─DQ─▶ f32 (zero point 0), once per value.
  ValueId dequantized_s8(ValueId x, const ActQuant& q) {
    if (auto it = s8_sources_.find(x); it != s8_sources_.end()) return it->second;
    const Value& xv = in_.value(x);
    const ValueId scale = constant(xv.name + "_s8_scale", TensorType{DType::f32, {}}, bytes_of(std::vector<float>{q.scale}));
    const ValueId zero = constant(xv.name + "_s8_zero_point", TensorType{DType::i8, {}}, bytes_of(std::vector<int8_t>{0}));
    const ValueId xq = node("QuantizeLinear", xv.name + "_s8", {x, scale, zero}, TensorType{DType::i8, xv.type.shape});
    const ValueId xd = node("DequantizeLinear", xv.name + "_s8_dequantized", {xq, scale, zero}, xv.type);
    return s8_sources_[x] = xd;
  }

  // Wq (s8) ─DQ(sw, 0, axis)─▶ f32, once per (weight, axis).
  ValueId dequantized_weight(ValueId w, int axis) {
    if (auto it = weights_.find({w, axis}); it != weights_.end()) return it->second;
    const Value& wv = in_.value(w);
    if (!wv.data) throw UserError(in_.source, wv.name, "writing the int8 plan as QDQ needs the weight's values, and the model has none");
    const Shape& s = wv.type.shape;
    const int64_t channels = s[static_cast<size_t>(axis)], numel = wv.type.numel();
    // Channel c's elements: row c of [O, ...] (axis 0), column c of [K, N] (axis 1).
    const int64_t per = numel / std::max<int64_t>(channels, 1);
    const int64_t channel_stride = axis == 0 ? per : 1, elem_stride = axis == 0 ? 1 : channels;
    const float* data = reinterpret_cast<const float*>(wv.data->data());
    std::vector<int8_t> q(static_cast<size_t>(numel));
    std::vector<float> scales(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      float m = 0.0f;
      for (int64_t i = 0; i < per; ++i) m = std::max(m, std::fabs(data[c * channel_stride + i * elem_stride]));
      const float sw = m > 0.0f ? m / 127.0f : 1.0f;
      for (int64_t i = 0; i < per; ++i) {
        const int64_t at = c * channel_stride + i * elem_stride;
        q[static_cast<size_t>(at)] = static_cast<int8_t>(std::clamp(std::nearbyint(data[at] / sw), -127.0f, 127.0f));
      }
      scales[static_cast<size_t>(c)] = sw;
    }
    const ValueId wq = constant(wv.name + "_quantized", TensorType{DType::i8, s}, bytes_of(q));
    const ValueId scale = constant(wv.name + "_scale", TensorType{DType::f32, {channels}}, bytes_of(scales));
    const ValueId zero = constant(wv.name + "_zero_point", TensorType{DType::i8, {channels}},
                                  bytes_of(std::vector<int8_t>(static_cast<size_t>(channels), 0)));
    Attributes attrs;
    attrs.emplace("axis", int64_t{axis});
    const ValueId wd = node("DequantizeLinear", wv.name + "_dequantized", {wq, scale, zero}, wv.type, std::move(attrs));
    return weights_[{w, axis}] = wd;
  }

  const Graph& in_;
  Graph out_;
  std::unordered_set<std::string> names_;
  std::map<ValueId, ValueId> sources_, s8_sources_;
  std::map<std::pair<ValueId, int>, ValueId> weights_;
};

}  // namespace

std::vector<NodeId> int8_anchors(const Graph& graph, const PlanQuantization& quantization, const std::vector<NodeId>& nodes) {
  const auto ranges = range_map(quantization);
  std::vector<NodeId> out;
  for (NodeId n : nodes)
    if (is_anchor(graph, graph.node(n), ranges)) out.push_back(n);
  return out;
}

std::vector<NodeId> compiled_int8(const Graph& graph, const PlanQuantization& quantization, const std::vector<NodeId>& anchors,
                                  const std::string& backend) {
  const Graph ranged = with_calibrated_ranges(graph, quantization);
  const DataflowIndex index(ranged);
  const std::unique_ptr<BackendCompiler> compiler = make_backend_compiler(backend);
  std::vector<NodeId> out;
  for (NodeId n : anchors) {
    IndexSet one(ranged.num_nodes());
    one.insert(n);
    try {
      compiler->compile(extract_function(ranged, SubGraph(index, one)));
      out.push_back(n);
    } catch (const KernelUnsupported&) {   // nothing in it would run in int8: the variant builds it in f32
    } catch (const KernelError&) {
    }
  }
  return out;
}

std::vector<NodeId> int8_partition_nodes(const Graph& graph, const Plan& plan) {
  const std::vector<std::string> real = backend_compiler_names();
  std::vector<NodeId> out;
  for (const Partition& p : plan.partitions) {
    if (std::find(real.begin(), real.end(), p.backend) == real.end()) continue;
    if (make_backend_compiler(p.backend)->precision() != "int8") continue;
    p.nodes.for_each([&](int i) {
      if (i < graph.num_nodes()) out.push_back(static_cast<NodeId>(i));
    });
  }
  std::sort(out.begin(), out.end());
  return out;
}

Graph quantize_anchors(const Graph& graph, const PlanQuantization& quantization, const std::vector<NodeId>& nodes) {
  if (graph.opset < 13)
    throw UserError(graph.source, "opset", "writing int8 as QDQ needs opset >= 13 (per-channel DequantizeLinear); the model imports " +
                                               std::to_string(graph.opset));
  const auto ranges = range_map(quantization);
  const std::map<std::string, std::vector<float>> shifts(quantization.bias_shifts.begin(), quantization.bias_shifts.end());
  const std::vector<float> none;
  const std::set<NodeId> quantized(nodes.begin(), nodes.end());
  QdqBuilder b(graph);
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    if (quantized.count(n) && is_anchor(graph, node, ranges))
      b.quantize(node, *act_quant(ranges.at(graph.value(node.inputs[0]).name)),
                 computed_right_operand(graph, node, ranges) ? onednn::s8_quant(ranges.at(graph.value(node.inputs[1]).name))
                                                             : std::nullopt,
                 [&]() -> const std::vector<float>& {
                   const auto it = shifts.find(graph.value(node.outputs[0]).name);
                   return it != shifts.end() ? it->second : none;
                 }());
    else
      b.copy(node);
  }
  return b.finish();
}

std::optional<onnx::ModelProto> plan_qdq_onnx(const Graph& graph, const Plan& plan, bool whole) {
  if (!plan.quantization) return std::nullopt;
  // The int8 backend whose compiler decides which anchors run in int8: the plan's, else onednn_int8.
  std::string backend;
  const std::vector<std::string> real = backend_compiler_names();
  for (const std::string& b : real)
    if (backend.empty() && make_backend_compiler(b)->precision() == "int8") backend = b;
  for (const Partition& p : plan.partitions)
    if (std::find(real.begin(), real.end(), p.backend) != real.end() && make_backend_compiler(p.backend)->precision() == "int8")
      backend = p.backend;
  std::vector<NodeId> nodes;
  if (whole) {
    for (NodeId n = 0; n < graph.num_nodes(); ++n) nodes.push_back(n);
  } else {
    nodes = int8_partition_nodes(graph, plan);
    if (nodes.empty()) return std::nullopt;
  }
  nodes = int8_anchors(graph, *plan.quantization, nodes);
  if (!backend.empty()) nodes = compiled_int8(graph, *plan.quantization, nodes, backend);
  onnx::ModelProto m = graph_to_onnx(quantize_anchors(graph, *plan.quantization, nodes));
  m.mutable_graph()->set_doc_string(whole ? "every convolution and matmul tessera's int8 variant takes, quantized with the plan's ranges"
                                          : "tessera's int8 plan: QuantizeLinear/DequantizeLinear where its int8 partitions quantize");
  return m;
}

}  // namespace tessera
