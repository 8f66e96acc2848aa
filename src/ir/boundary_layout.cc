// Boundary layouts (see boundary_layout.h).
#include "ir/boundary_layout.h"

#include <set>

#include "tessera/error.h"
#include "ir/op_registry.h"

namespace tessera {

const char* to_string(Layout layout) { return layout == Layout::nhwc ? "nhwc" : "plain"; }

bool parse_layout(const std::string& text, Layout& out) {
  if (text == "plain") out = Layout::plain;
  else if (text == "nhwc") out = Layout::nhwc;
  else return false;
  return true;
}

bool layout_sensitive(const TensorType& type) {
  const Shape& s = type.shape;
  return type.dtype == DType::f32 && s.size() == 4 && s[1] > 1 && s[2] * s[3] > 1;
}

bool layout_sensitive(const Value& value) { return !value.plain_only && layout_sensitive(value.type); }

namespace {

// Ops that need a 4-D activation's channels and spatial axes as such: their operands and
// results are feature maps.
bool is_spatial(const std::string& op) {
  static const std::set<std::string, std::less<>> ops = {
      "AveragePool", "BatchNormalization", "Col2Im", "Conv", "ConvInteger", "ConvTranspose", "DeformConv",
      "DepthToSpace", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GridSample", "InstanceNormalization",
      "LRN", "LpPool", "MaxPool", "MaxRoiPool", "MaxUnpool", "QLinearConv", "Resize", "RoiAlign", "SpaceToDepth",
      "Upsample"};
  return ops.count(op) > 0;
}

// Ops that keep a feature map one (elementwise, broadcast, and the injective ops a CNN uses on
// channels): what they read and write is one feature map or none.
bool keeps_layout(const Node& n) {
  const OpKind k = op_kind(n.op);
  return k == OpKind::Elementwise || k == OpKind::Broadcast || n.op == "Concat" || n.op == "Split" ||
         n.op == "Slice" || n.op == "Pad";
}

ValueId find_root(std::vector<ValueId>& parent, ValueId v) {
  while (parent[size_t(v)] != v) v = parent[size_t(v)] = parent[size_t(parent[size_t(v)])];
  return v;
}

}  // namespace

void mark_feature_maps(Graph& g) {
  std::vector<ValueId> parent(g.values.size());
  for (size_t v = 0; v < parent.size(); ++v) parent[v] = static_cast<ValueId>(v);
  std::vector<char> spatial(g.values.size(), 0);
  auto activations = [&](const Node& n, auto&& f) {
    for (const auto* list : {&n.inputs, &n.outputs})
      for (ValueId v : *list)
        if (v != kNoValue && !g.value(v).is_constant()) f(v);
  };
  for (const Node& n : g.nodes) {
    if (is_spatial(n.op)) activations(n, [&](ValueId v) { spatial[size_t(v)] = 1; });
    if (!keeps_layout(n)) continue;
    ValueId first = kNoValue;
    activations(n, [&](ValueId v) {
      if (first == kNoValue) first = v;
      else parent[size_t(find_root(parent, v))] = find_root(parent, first);
    });
  }
  std::vector<char> component_spatial(g.values.size(), 0);
  for (size_t v = 0; v < g.values.size(); ++v)
    if (spatial[v]) component_spatial[size_t(find_root(parent, static_cast<ValueId>(v)))] = 1;
  for (size_t v = 0; v < g.values.size(); ++v) {
    Value& val = g.values[v];
    val.plain_only = !val.is_constant() && !component_spatial[size_t(find_root(parent, static_cast<ValueId>(v)))];
  }
}

Shape physical_shape(const TensorType& type, Layout layout) {
  const Shape& s = type.shape;
  if (layout == Layout::plain || s.size() != 4) return s;
  return {s[0], s[2], s[3], s[1]};
}

bool BoundaryLayouts::all_plain() const {
  for (Layout l : inputs)
    if (l != Layout::plain) return false;
  for (Layout l : outputs)
    if (l != Layout::plain) return false;
  return true;
}

BoundaryLayouts native_boundary_layouts(const Graph& fn, Layout native, const std::vector<bool>& activation,
                                        const std::vector<bool>& to_function) {
  auto flag = [](const std::vector<bool>& flags, size_t i) { return flags.empty() || (i < flags.size() && flags[i]); };
  BoundaryLayouts out;
  for (size_t i = 0; i < fn.inputs.size(); ++i)
    out.inputs.push_back(flag(activation, i) && layout_sensitive(fn.value(fn.inputs[i])) ? native : Layout::plain);
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    out.outputs.push_back(flag(to_function, i) && layout_sensitive(fn.value(fn.outputs[i])) ? native : Layout::plain);
  return out;
}

std::vector<bool> activation_inputs(const Graph& fn) {
  std::vector<bool> out(fn.inputs.size(), false);
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const ValueId v = fn.inputs[i];
    bool read = false;
    for (const Node& n : fn.nodes)
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (n.inputs[k] != v) continue;
        read = true;
        if (k == 0 || (n.op != "Conv" && n.op != "ConvTranspose")) out[i] = true;
      }
    if (!read) out[i] = true;   // passed straight through to an output
  }
  return out;
}

Graph layout_conversion(const TensorType& type, Layout from, Layout to) {
  TESSERA_CHECK(from != to && layout_sensitive(type), "layout_conversion of " + to_string(type));
  Graph g;
  g.name = std::string("layout_") + to_string(from) + "_to_" + to_string(to);
  ValueId x = g.add_value(Value{"x", TensorType{type.dtype, physical_shape(type, from)}, ValueKind::Input});
  g.inputs.push_back(x);
  ValueId y = g.add_value(Value{"y", TensorType{type.dtype, physical_shape(type, to)}});
  Node t;
  t.name = "convert";
  t.op = "Transpose";
  t.attrs["perm"] = to == Layout::nhwc ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 3, 1, 2};
  t.inputs = {x};
  t.outputs = {y};
  g.add_node(std::move(t));
  g.outputs.push_back(y);
  return g;
}

}  // namespace tessera
