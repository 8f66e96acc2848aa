// The f16/bf16 wrapper around ref's kernels (see half_kernels.h).
#include "backends/ref/half_kernels.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "backends/ref/half_convert.h"

namespace tessera::ref {
namespace {

// Sorted, for binary search: kernels that move or convert elements of any dtype, and those that
// interpret typed sub-graphs.
constexpr std::array<std::string_view, 24> kNative{
    "Cast",    "CastLike", "Concat", "ConstantOfShape", "DepthToSpace", "Expand", "EyeLike", "Flatten",
    "Gather",  "GatherElements", "Identity", "If", "Loop", "Pad", "Reshape", "Scan",
    "Shape",   "Size", "Slice", "SpaceToDepth", "Split", "Squeeze", "Tile", "Transpose"};
static_assert(std::is_sorted(kNative.begin(), kNative.end()));

bool any_half(std::span<const ConstTensorView> in, std::span<const TensorView> out) {
  return std::any_of(in.begin(), in.end(), [](const ConstTensorView& v) { return v.present && is_half(v.type.dtype); }) ||
         std::any_of(out.begin(), out.end(), [](const TensorView& v) { return v.data && is_half(v.type.dtype); });
}

HostTensor widened(const ConstTensorView& v) {
  HostTensor t(TensorType{DType::f32, v.type.shape});
  widen_to_f32(v.type.dtype, v.data, t.as<float>().data(), t.count());
  return t;
}

// Runs `kernel` on f32 copies of the node's half tensors and rounds the outputs back.
void run_in_f32(const NodeKernel& kernel, const Node& node, std::span<const ConstTensorView> in,
                std::span<const TensorView> out) {
  std::vector<HostTensor> in_f32(in.size()), out_f32(out.size());
  std::vector<ConstTensorView> ins(in.begin(), in.end());
  std::vector<TensorView> outs(out.begin(), out.end());
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].present && is_half(in[i].type.dtype)) {
      in_f32[i] = widened(in[i]);
      ins[i] = std::as_const(in_f32[i]).view();
    }
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].data && is_half(out[i].type.dtype)) {
      out_f32[i] = HostTensor(TensorType{DType::f32, out[i].type.shape});
      outs[i] = out_f32[i].view();
    }
  kernel(node, ins, outs);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].data && is_half(out[i].type.dtype))
      narrow_from_f32(out[i].type.dtype, out_f32[i].as<float>().data(), out[i].data, out_f32[i].count());
}

}  // namespace

bool handles_half_natively(std::string_view op) { return std::binary_search(kNative.begin(), kNative.end(), op); }

KernelRegistry with_half_precision(const KernelRegistry& kernels) {
  KernelRegistry out(kernels.backend());
  for (const std::string& op : kernels.ops()) {
    NodeKernel kernel = *kernels.find(op);
    if (handles_half_natively(op)) {
      out.add(op, std::move(kernel));
      continue;
    }
    out.add(op, [kernel](const Node& node, std::span<const ConstTensorView> in, std::span<const TensorView> out_views) {
      if (any_half(in, out_views)) run_in_f32(kernel, node, in, out_views);
      else kernel(node, in, out_views);
    });
  }
  return out;
}

}  // namespace tessera::ref
