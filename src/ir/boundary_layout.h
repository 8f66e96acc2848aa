// Boundary layouts: the memory order in which an activation travels between two functions.
//
// A 4-D activation [N, C, H, W] can be stored plain (NCHW, row-major: the ONNX order, what graph
// inputs and outputs always are) or NHWC (channels last). oneDNN's fastest convolutions here
// (brgconv, brdgmm depthwise) and everything XNNPACK runs compute in NHWC; ref, eigen, blas and
// halide read plain memory. Were every value to cross between functions plain, a oneDNN or
// XNNPACK function would reorder its inputs in and its outputs out on every call, even when its
// neighbour wants NHWC too (such a reorder can cost several times the depthwise conv it feeds).
// So each backend has a *native* boundary layout (BackendSpec::boundary_layout,
// BackendCompiler::native_layout) and its functions read and write their activations in it:
//
//   onednn fn ──NHWC──▶ xnnpack fn ──NHWC──▶ onednn fn     no conversion anywhere
//   onednn fn ──NHWC──▶ [nhwc->plain] ──▶ ref fn          one conversion, run by the executor
//
// The conversion is itself a function (layout_conversion(): a Transpose that oneDNN compiles to
// a reorder): the executor runs it between the two functions, and the search prices it as the
// boundary cost of that crossing (docs/design.md "Crossings"), measured or estimated like any
// candidate and kept in the cost database. So a candidate's cost is context-free (measured with
// its backend's native layouts), and what a plan pays for crossing layouts is in its total.
//
// Which values: only *layout-sensitive* ones (f32, rank 4, C > 1 and H*W > 1) that are feature
// maps; for any other value both orders are the same bytes, and it is always plain. A feature map
// is an activation some spatial op reads or writes, directly or through elementwise, broadcast,
// Concat/Split/Slice/Pad ops (mark_feature_maps, at import): a 4-D value that is not one, such
// as attention's [1, heads, 128, 64], is read by matmuls and softmax, which want it plain, and
// NHWC would only bounce it through two reorders per crossing.
// Weights stay plain (they are constants the backend packs once). Graph inputs and outputs are
// plain, and so is a function's parameter that only ever receives a graph input, and its result
// that only ever becomes a graph output no other call reads (codegen.h): the function's first
// kernel reads such an input as it is or converts it once itself, where a conversion by the
// executor could be undone inside (mobilenet_v3_small's stem convolution reads NCHW: two reorders
// on the way in). As the contract says, they are not charged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/tensor_type.h"

namespace tessera {

enum class Layout : uint8_t { plain, nhwc };

const char* to_string(Layout layout);
// "plain" or "nhwc"; anything else is nullopt-like: returns false.
bool parse_layout(const std::string& text, Layout& out);

// f32, rank 4, C > 1 and H*W > 1: the two layouts differ in memory.
bool layout_sensitive(const TensorType& type);
// Such a type, and a feature map (not Value::plain_only): the value may travel NHWC.
bool layout_sensitive(const Value& value);
// Sets Value::plain_only on every non-constant value of `g` that is no feature map (see above),
// clears it on the others: a function of the graph's structure alone, so the search, the
// executor and a re-import of the same graph (JSON or ONNX, before or after simplification)
// agree. Union-find over values joined by layout-agnostic ops; linear in the graph's size.
void mark_feature_maps(Graph& g);
// The shape of the bytes of a value of logical `type` stored in `layout` ([N,H,W,C] for nhwc).
Shape physical_shape(const TensorType& type, Layout layout);

// One layout per function input and output, in fn.inputs / fn.outputs order. Empty vectors mean
// all plain (what every compiler accepts).
// `varying_inputs[i]`: the caller may pass other contents behind input i's pointer from one run
// to the next (a value computed from the model's inputs in another function, such as attention's
// K^T as a MatMul's second operand), so nothing derived from its contents may be kept between
// runs, as backends keep packed weights; empty: no input varies (a function seen alone, or one
// whose parameters are model constants and graph inputs).
struct BoundaryLayouts {
  std::vector<Layout> inputs, outputs;
  std::vector<bool> varying_inputs;
  bool all_plain() const;   // layouts only
  bool varies(size_t input) const { return input < varying_inputs.size() && varying_inputs[input]; }
  bool operator==(const BoundaryLayouts&) const = default;
};

// The layouts a backend with native layout `native` uses for `fn`: `native` on every
// layout-sensitive input that is an activation (`activation[i]`, all inputs when empty) and on
// every layout-sensitive output that travels to another function (`to_function[i]`, all outputs
// when empty), plain elsewhere.
BoundaryLayouts native_boundary_layouts(const Graph& fn, Layout native, const std::vector<bool>& activation = {},
                                        const std::vector<bool>& to_function = {});

// For a function seen alone (a candidate being measured, with no call site to look at): per
// input, false when every node that reads it takes it as a convolution's weights or bias (a model
// constant, which codegen passes plain), true otherwise. Without it a measured conv would receive
// its 4-D weights as "nhwc" and oneDNN would reorder them on every run, pricing the function
// above what it runs in.
std::vector<bool> activation_inputs(const Graph& fn);

// The backend whose compiler runs conversions in the executor (a oneDNN reorder), and whose
// price the search adds to a crossing between layouts (src/search/layout_conversions.h).
inline constexpr const char* kConversionBackend = "onednn";

// The function that converts a value of logical `type` from `from` to `to` (from != to, type
// layout-sensitive): one Transpose of the stored bytes, [N,C,H,W] -> [N,H,W,C] or back.
Graph layout_conversion(const TensorType& type, Layout from, Layout to);

}  // namespace tessera
