#include "emit/graph_edit.h"

#include <algorithm>

namespace tessera::emit_detail {

Graph compact(const Graph& g) {
  Graph out;
  out.name = g.name;
  out.source = g.source;
  out.opset = g.opset;
  std::vector<ValueId> remap(g.values.size(), kNoValue);
  for (ValueId v : g.inputs) out.inputs.push_back(remap[static_cast<size_t>(v)] = out.add_value(g.value(v)));
  std::vector<bool> read(g.values.size(), false);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v != kNoValue) read[static_cast<size_t>(v)] = true;
  for (ValueId v : g.outputs) read[static_cast<size_t>(v)] = true;
  for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v)
    if (read[static_cast<size_t>(v)] && g.value(v).is_constant() && remap[static_cast<size_t>(v)] == kNoValue)
      remap[static_cast<size_t>(v)] = out.add_value(g.value(v));
  for (const Node& n : g.nodes) {
    Node node = n;
    for (ValueId& v : node.inputs)
      if (v != kNoValue) v = remap[static_cast<size_t>(v)];
    for (ValueId& v : node.outputs) {
      Value val = g.value(v);
      val.producer = kNoNode;
      v = remap[static_cast<size_t>(v)] = out.add_value(std::move(val));
    }
    out.add_node(std::move(node));
  }
  for (ValueId v : g.outputs) out.outputs.push_back(remap[static_cast<size_t>(v)]);
  return out;
}

Shape transpose_shape(const Shape& s, const std::vector<int64_t>& perm) {
  Shape out;
  for (int64_t p : perm) out.push_back(s[static_cast<size_t>(p)]);
  return out;
}

TensorData transpose_data(const TensorData& data, const TensorType& type, const std::vector<int64_t>& perm) {
  if (!data) return nullptr;
  const size_t rank = perm.size(), elem = dtype_size(type.dtype);
  const Shape out_shape = transpose_shape(type.shape, perm);
  std::vector<int64_t> in_stride(rank, 1);
  for (size_t d = rank; d-- > 1;) in_stride[d - 1] = in_stride[d] * type.shape[d];
  auto out = std::make_shared<TensorBytes>(data->size());
  std::vector<int64_t> idx(rank, 0);   // index into the output
  for (int64_t o = 0, n = type.numel(); o < n; ++o) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += idx[d] * in_stride[static_cast<size_t>(perm[d])];
    std::copy_n(data->data() + src * static_cast<int64_t>(elem), elem, out->data() + o * static_cast<int64_t>(elem));
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace tessera::emit_detail
