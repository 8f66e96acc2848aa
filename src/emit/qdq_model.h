// An int8 plan as a QDQ ONNX model: the fp32 model with QuantizeLinear/DequantizeLinear pairs
// exactly where the plan's int8 partitions quantize, so another runtime (ONNX Runtime, the
// onnx reference) can run and check what tessera's plan computes.
//
// What an int8 variant (onednn_int8, src/backends/onednn/onednn_int8_variant.cc) quantizes is an
// *anchor*: a 2-D Conv, or a MatMul/Gemm with a 2-D weight (Gemm: alpha 1, beta 1), whose input 0
// is an f32 activation with a calibrated range (Plan::quantization), whose weight is an f32
// constant and whose bias, if any, is not computed by a node; or a MatMul whose right operand is
// computed and ranged too (attention's Q·K^T, softmax·V), whose right operand then reads
// Q(sb, 0) ─▶ s8 ─▶ DQ(sb, 0) per tensor, sb = max|range| / 127 (onednn_act_quant.h).
// An anchor whose output carries an int8 bias shift (PlanQuantization::bias_shifts) writes through
// Sub(y', shift) with the shift as a constant broadcasting over its channel axis, as the variant
// subtracts it. Each anchor in a partition whose backend computes in int8 becomes
//
//   before:  x ──────────────────────────────▶ Conv(x, W, B) ─▶ y
//   after:   x ─Q(sx, zx)─▶ u8 ─DQ(sx, zx)─▶ Conv(x', W', B) ─▶ y        (x' read by int8 anchors only)
//            Wq (s8 initializer) ─DQ(sw[o], 0, axis)─▶ W'
//
// with the variant's own rules: sx = (hi - lo) / 255 and zx = round(-lo / sx) from the range
// widened to hold 0; sw[o] = max|W[o]| / 127 (1 for a zero channel) per output channel, Wq =
// round(W / sw) clamped to [-127, 127]. The channel axis: 0 for Conv and for Gemm with transB,
// 1 for MatMul and Gemm without it (their weight is [K, N]). The bias and every other node stay
// fp32, as in the variant: the anchor's result is f32, so there is no QuantizeLinear after it.
// Rounding is half to even on both sides (oneDNN's reorder, ONNX's QuantizeLinear), so the model
// agrees with tessera's int8 plan up to fp32 accumulation order (oneDNN accumulates exactly in
// int32) and a rare one-step flip where x * (1 / sx) and x / sx round apart.
//
// Not needed for correctness: output QuantizeLinear nodes. Without them ONNX Runtime does not fuse
// the groups into QLinearConv and runs them as fp32 convolutions on dequantized values: this file
// is for checking numbers, not for speed (a whole-model QDQ made for speed, with output
// quantization and int32 biases: scripts/quantize_qdq.py).
//
// An anchor the variant declines at compile time because oneDNN has no int8 kernel for it (its
// probe: squeeze-excitation convolutions on 1x1 maps, say) stays fp32 here too: each anchor is
// compiled alone by the int8 backend, and one it refuses (KernelUnsupported) is left out. The probe
// inside a larger function sees more post-ops, so in principle it could decide otherwise there.
// Not modelled: weights or biases computed by nodes outside the partition, which the variant
// quantizes at run time and the file leaves fp32.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

// The anchors (see above) among `nodes` (NodeIds of `graph`), given the plan's ranges.
std::vector<NodeId> int8_anchors(const Graph& graph, const PlanQuantization& quantization, const std::vector<NodeId>& nodes);

// The nodes in `plan`'s partitions whose backend computes in int8, ascending.
std::vector<NodeId> int8_partition_nodes(const Graph& graph, const Plan& plan);

// The anchors among `anchors` that `backend`'s compiler builds in int8, each compiled alone with
// the plan's ranges (a function it refuses as KernelUnsupported computes nothing in int8).
std::vector<NodeId> compiled_int8(const Graph& graph, const PlanQuantization& quantization, const std::vector<NodeId>& anchors,
                                  const std::string& backend);

// `graph` with the anchors among `nodes` quantized as above, constants no node reads any more
// dropped. Every weight read by an anchor must carry data (UserError naming it otherwise), and the
// model's opset must be >= 13 (per-axis DequantizeLinear).
Graph quantize_anchors(const Graph& graph, const PlanQuantization& quantization, const std::vector<NodeId>& nodes);

// The plan as a QDQ model (its int8 partitions' anchors), or nullopt when the plan has no int8
// partition. `whole`: every anchor of the model, in whichever partition, quantized with the same
// ranges (what the whole model in int8 would compute under tessera's scheme); nullopt when the
// plan records no quantization.
std::optional<onnx::ModelProto> plan_qdq_onnx(const Graph& graph, const Plan& plan, bool whole = false);

}  // namespace tessera
