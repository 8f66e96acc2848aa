#include "frontend/constant_folding.h"

#include <cstring>
#include <exception>

#include "tessera/host_tensor.h"

namespace tessera::detail {
namespace {

// Shape and Size read their input's type, never its elements.
bool reads_type_only(const Node& n) { return n.op == "Shape" || n.op == "Size"; }

bool has_full_data(const Value& v) {
  return v.is_constant() && v.data && v.data->size() == static_cast<size_t>(v.type.numel()) * dtype_size(v.type.dtype);
}

// The views of n's inputs, or nullopt when one of them is not known at import.
std::optional<std::vector<ConstTensorView>> known_inputs(const Graph& g, const Node& n, const std::vector<char>& known) {
  std::vector<ConstTensorView> views;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) {
      views.push_back(ConstTensorView::missing());
      continue;
    }
    const Value& val = g.value(v);
    if (has_full_data(val)) views.emplace_back(val.type, val.data->data());
    else if (reads_type_only(n) && known[v]) views.emplace_back(val.type, nullptr);
    else return std::nullopt;
  }
  return views;
}

// Every present output typed, none larger than a fold may be.
bool outputs_foldable(const Graph& g, const Node& n, const std::vector<char>& known) {
  bool any = false;
  for (ValueId v : n.outputs) {
    if (v == kNoValue) continue;
    if (!known[v] || g.value(v).type.numel() > kMaxFoldElements) return false;
    any = true;
  }
  return any;
}

bool foldable_op(const Node& n, const KernelRegistry& kernels) {
  if (!n.domain.empty() || n.op == "If" || n.op == "Loop" || n.op == "Scan") return false;
  return kernels.supports(n.op);
}

// Runs n's kernel; its outputs, or nullopt when the kernel refuses (an unsupported dtype or
// attribute, inputs it finds wrong): then the node stays, and running the plan reports it.
std::optional<std::vector<HostTensor>> run_kernel(const Graph& g, const Node& n, const std::vector<ConstTensorView>& ins,
                                                  const KernelRegistry& kernels) {
  std::vector<HostTensor> results(n.outputs.size());
  std::vector<TensorView> outs(n.outputs.size());
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k] == kNoValue) continue;
    results[k] = HostTensor(g.value(n.outputs[k]).type);
    outs[k] = results[k].view();
  }
  try {
    kernels.run(n, ins, outs);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return results;
}

}  // namespace

std::optional<std::vector<int64_t>> constant_ints(const Graph& g, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const Value& val = g.value(v);
  if (!has_full_data(val) || val.type.numel() > kMaxFoldElements) return std::nullopt;
  std::vector<int64_t> out(static_cast<size_t>(val.type.numel()));
  const uint8_t* p = val.data->data();
  for (size_t i = 0; i < out.size(); ++i) {
    switch (val.type.dtype) {
      case DType::i64: std::memcpy(&out[i], p + 8 * i, 8); break;
      case DType::i32: { int32_t x; std::memcpy(&x, p + 4 * i, 4); out[i] = x; break; }
      case DType::i8: out[i] = static_cast<int8_t>(p[i]); break;
      case DType::u8:
      case DType::boolean: out[i] = p[i]; break;
      default: return std::nullopt;
    }
  }
  return out;
}

int fold_constants(Graph& g, std::vector<char>& known, std::vector<char>& folded, const KernelRegistry& kernels) {
  int count = 0;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (folded[id]) continue;
    const Node& n = g.node(id);
    if (!foldable_op(n, kernels) || !outputs_foldable(g, n, known)) continue;
    std::optional<std::vector<ConstTensorView>> ins = known_inputs(g, n, known);
    if (!ins) continue;
    std::optional<std::vector<HostTensor>> results = run_kernel(g, n, *ins, kernels);
    if (!results) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] == kNoValue) continue;
      Value& out = g.value(n.outputs[k]);
      const auto* bytes = reinterpret_cast<const uint8_t*>((*results)[k].bytes.data());
      out.kind = ValueKind::Constant;
      out.producer = kNoNode;
      out.data = std::make_shared<TensorBytes>(bytes, bytes + (*results)[k].bytes.size());
    }
    folded[id] = 1;
    ++count;
  }
  return count;
}

}  // namespace tessera::detail
