// XnnpackProgram: making the subgraph and runtime from the definitions, and running it
// (see xnnpack_program.h).
#include <algorithm>
#include <cstring>

#include "backends/xnnpack/xnnpack_program.h"
#include "backends/xnnpack/xnnpack_threadpool.h"
#include "backends/kernel.h"

namespace tessera::xnnpack {
namespace {

struct SubgraphDeleter {
  void operator()(xnn_subgraph* g) const { xnn_delete_subgraph(g); }
};

}  // namespace

XnnpackProgram::~XnnpackProgram() {
  if (runtime_) xnn_delete_runtime(runtime_);
}

std::vector<const float*> XnnpackProgram::static_sources() const {
  std::vector<const float*> out;
  for (const TensorDef& d : defs_)
    for (ValueId v : d.sources) out.push_back(frame_.has_data(v) ? frame_.cf32(v) : nullptr);
  return out;
}

void XnnpackProgram::instantiate(const std::vector<const float*>& sources, pthreadpool_t pool) {
  if (runtime_) xnn_delete_runtime(runtime_);
  runtime_ = nullptr;
  set_up_.clear();
  xnn_subgraph_t raw = nullptr;
  if (xnn_create_subgraph(externals_, 0, &raw) != xnn_status_success)
    throw KernelUnsupported("xnnpack: xnn_create_subgraph failed");
  std::unique_ptr<xnn_subgraph, SubgraphDeleter> subgraph(raw);

  std::vector<std::vector<float>> data;
  std::vector<uint32_t> ids(defs_.size(), XNN_INVALID_VALUE_ID);
  size_t s = 0;
  for (size_t i = 0; i < defs_.size(); ++i) {
    const TensorDef& d = defs_[i];
    const void* ptr = nullptr;
    if (!d.sources.empty()) {
      std::vector<float>& buf = data.emplace_back(d.static_elems + XNN_EXTRA_BYTES / sizeof(float), 0.0f);
      std::vector<const float*> src(sources.begin() + static_cast<std::ptrdiff_t>(s),
                                    sources.begin() + static_cast<std::ptrdiff_t>(s + d.sources.size()));
      s += d.sources.size();
      // A weight computed in main (a DequantizeLinear of int8 weights) is a parameter that travels
      // in the boundary layout: its filter arrives [O, KH, KW, I], and the fills read ONNX's order.
      std::vector<std::vector<float>> plain;
      for (size_t k = 0; k < src.size(); ++k) {
        const ValueId v = d.sources[k];
        const Shape& sh = shape(v);
        if (!src[k] || layout_[static_cast<size_t>(v)] != Layout::nhwc || sh.size() != 4) continue;
        std::vector<float>& p = plain.emplace_back(static_cast<size_t>(fn_.value(v).type.numel()));
        nhwc_to_nchw(src[k], p.data(), {static_cast<size_t>(sh[0]), static_cast<size_t>(sh[1]), static_cast<size_t>(sh[2]),
                                        static_cast<size_t>(sh[3])});
        src[k] = p.data();
      }
      if (std::all_of(src.begin(), src.end(), [](const float* p) { return p != nullptr; }))
        d.fill(src.data(), buf.data());   // else: validation at compile time, zero weights
      ptr = buf.data();
    }
    if (xnn_define_tensor_value(subgraph.get(), xnn_datatype_fp32, d.dims.size(), d.dims.data(), ptr, d.external_id,
                                d.flags, &ids[i]) != xnn_status_success)
      throw KernelUnsupported("xnnpack: a tensor of rank " + std::to_string(d.dims.size()) + " was refused");
  }
  for (const NodeDef& n : nodes_) {
    const xnn_status status = n.define(subgraph.get(), ids);
    if (status != xnn_status_success)
      throw KernelUnsupported("xnnpack: " + n.what + ": XNNPACK refused it (status " + std::to_string(status) + ")");
  }
  xnn_runtime_t rt = nullptr;
  // Workers should yield after each invoke instead of spinning: the next function of a plan is
  // often another library's (oneDNN's OpenMP team), which spinning pthreadpool workers would
  // starve. The flag alone does not do it in this snapshot: run() also calls yield_workers.
  const xnn_status status = xnn_create_runtime_v2(subgraph.get(), pool, XNN_FLAG_YIELD_WORKERS, &rt);
  if (status != xnn_status_success)
    throw KernelUnsupported("xnnpack: xnn_create_runtime_v2 failed (status " + std::to_string(status) + ")");
  runtime_ = rt;
  static_data_ = std::move(data);
  built_for_ = sources;
  built_pool_ = pool;
}

void XnnpackProgram::run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) {
  frame_.bind(inputs, outputs);
  const std::vector<const float*> sources = static_sources();
  const pthreadpool_t pool = threadpool();
  if (!runtime_ || varying_weights_ || sources != built_for_ || pool != built_pool_) instantiate(sources, pool);

  std::vector<std::pair<uint32_t, void*>> external;
  for (InputSlot& in : inputs_) {
    if (layout_[static_cast<size_t>(in.value)] == Layout::nhwc) from_nhwc(frame_.cf32(in.value), in.buffer.data(), shape(in.value), in.view);
    else to_view(frame_.cf32(in.value), in.buffer.data(), shape(in.value), in.view);
    external.emplace_back(in.external_id, in.buffer.data());
  }
  for (OutputSlot& out : outputs_)
    external.emplace_back(out.external_id, out.in_place ? static_cast<void*>(frame_.f32(out.value)) : out.buffer.data());
  if (external != set_up_) {   // XNNPACK rebuilds indirection buffers on setup: only when pointers move
    std::vector<xnn_external_value> values;
    for (const auto& [id, ptr] : external) values.push_back({id, ptr});
    if (xnn_setup_runtime(runtime_, values.size(), values.data()) != xnn_status_success)
      throw KernelError("xnnpack: xnn_setup_runtime failed");
    set_up_ = std::move(external);
  }
  if (xnn_invoke_runtime(runtime_) != xnn_status_success) throw KernelError("xnnpack: xnn_invoke_runtime failed");
  yield_workers(pool);
  for (OutputSlot& out : outputs_) {
    if (out.in_place) continue;
    const Shape& s = fn_.value(out.value).type.shape;
    const std::array<size_t, 4> d{static_cast<size_t>(s[0]), static_cast<size_t>(s[1]), static_cast<size_t>(s[2]), static_cast<size_t>(s[3])};
    if (layout_[static_cast<size_t>(out.value)] == Layout::nhwc) nchw_to_nhwc(out.buffer.data(), frame_.f32(out.value), d);
    else nhwc_to_nchw(out.buffer.data(), frame_.f32(out.value), d);
  }
}

size_t XnnpackProgram::workspace_bytes() const {
  size_t n = frame_.owned_bytes();
  for (const auto& d : static_data_) n += d.size() * sizeof(float);
  for (const InputSlot& in : inputs_) n += in.buffer.size() * sizeof(float);
  for (const OutputSlot& out : outputs_) n += out.buffer.size() * sizeof(float);
  return n;   // XNNPACK's own intermediates and packed weights are not visible through its API
}

}  // namespace tessera::xnnpack
