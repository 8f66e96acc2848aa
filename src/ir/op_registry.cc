#include "ir/op_registry.h"

#include "ir/op_table.h"

namespace tessera {
namespace detail {

namespace {
const Shape kEmpty;
bool has_input(const Graph& g, const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i] != kNoValue; }
}  // namespace

int64_t in_numel(const Graph& g, const Node& n, size_t i) {
  return has_input(g, n, i) ? g.value(n.inputs[i]).type.numel() : 0;
}
int64_t out_numel(const Graph& g, const Node& n, size_t i) {
  return i < n.outputs.size() ? g.value(n.outputs[i]).type.numel() : 0;
}
const Shape& in_shape(const Graph& g, const Node& n, size_t i) {
  return has_input(g, n, i) ? g.value(n.inputs[i]).type.shape : kEmpty;
}
const Shape& out_shape(const Graph& g, const Node& n, size_t i) {
  return i < n.outputs.size() ? g.value(n.outputs[i]).type.shape : kEmpty;
}

}  // namespace detail

namespace {

const detail::OpTable& table() {
  static const detail::OpTable t = [] {
    detail::OpTable t;
    detail::register_elementwise_ops(t);
    detail::register_linear_ops(t);
    detail::register_shape_ops(t);
    detail::register_reduction_ops(t);
    detail::register_quantized_ops(t);
    return t;
  }();
  return t;
}

}  // namespace

char op_kind_letter(OpKind k) { return "EBIRAO"[static_cast<int>(k)]; }

std::string_view op_kind_name(OpKind k) {
  static constexpr std::string_view names[] = {"elementwise", "broadcast", "injective",
                                               "reduction",   "out-elementwise-fusable", "opaque"};
  return names[static_cast<int>(k)];
}

const OpInfo* find_op(std::string_view op) {
  auto it = table().ops.find(op);
  return it == table().ops.end() ? nullptr : &it->second;
}

std::vector<std::string> registered_ops() {
  std::vector<std::string> out;
  for (const auto& [name, info] : table().ops) out.push_back(name);
  return out;
}

OpKind op_kind(std::string_view op) {
  const OpInfo* info = find_op(op);
  return info ? info->kind : OpKind::Opaque;
}

bool is_value_input(std::string_view op, size_t index) {
  struct Entry {
    std::string_view op;
    size_t first, last;   // input indices [first, last]
  };
  static constexpr Entry kValueInputs[] = {
      {"Reshape", 1, 1},  {"Resize", 1, 3},    {"Upsample", 1, 1}, {"Slice", 1, 4},     {"Expand", 1, 1},
      {"Tile", 1, 1},     {"Pad", 1, 3},       {"Clip", 1, 2},     {"Squeeze", 1, 1},   {"Unsqueeze", 1, 1},
      {"Split", 1, 1},    {"TopK", 1, 1},      {"Range", 0, 2},    {"OneHot", 1, 2},    {"ConstantOfShape", 0, 0},
      {"ReduceSum", 1, 1}, {"ReduceMean", 1, 1}, {"ReduceMax", 1, 1}, {"ReduceMin", 1, 1}, {"ReduceProd", 1, 1},
      {"ReduceL1", 1, 1}, {"ReduceL2", 1, 1},  {"ReduceSumSquare", 1, 1}, {"ReduceLogSumExp", 1, 1},
      {"QuantizeLinear", 1, 2}, {"DequantizeLinear", 1, 2}, {"QLinearConv", 1, 7}, {"QLinearMatMul", 1, 7},
  };
  for (const Entry& e : kValueInputs)
    if (e.op == op) return index >= e.first && index <= e.last;
  return false;
}

double node_flops(const Graph& g, const Node& n) {
  const OpInfo* info = find_op(n.op);
  return info && info->flops ? info->flops(g, n) : 0.0;
}

double node_bytes(const Graph& g, const Node& n) {
  double bytes = 0;
  for (ValueId v : n.inputs)
    if (v != kNoValue) bytes += static_cast<double>(g.value(v).type.bytes());
  for (ValueId v : n.outputs) bytes += static_cast<double>(g.value(v).type.bytes());
  return bytes;
}

}  // namespace tessera
