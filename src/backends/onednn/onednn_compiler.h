// The `onednn` backend's compiler: a function becomes a list of oneDNN primitives, created once.
//
//   fn(x, W, B, r) { Conv(x, W, B) ─▶ Add(., r) ─▶ Relu } -> y
//     compile:  conv primitive, src/weights/dst = format_tag::any (oneDNN picks blocked layouts),
//               post-ops [binary_add(r), eltwise_relu]; reorders x -> blocked, W -> blocked
//               (cached), blocked -> y at the boundary
//     run:      set the boundary memories' handles; execute the step list on one stream
//
// Steps. Nodes are taken in order. An *anchor* (Conv, ConvTranspose, MatMul, Gemm, pooling,
// BatchNormalization, eltwise, binary) absorbs the chain that follows it while each next node is
// the only consumer of the chain's value and is an eltwise op (Relu, Clip, HardSigmoid, ...) or a
// binary op whose other operand is ready before the anchor runs (binary post-op, broadcast
// allowed). A post-op is kept only if oneDNN accepts the primitive with it; otherwise the chain
// stops there and the node becomes a step of its own. Softmax, LogSoftmax, LayerNormalization
// take no post-ops. Decomposed groups (onednn_patterns.h) count as one node: the exported layer
// norm is a layer_normalization anchor, an erf-GELU a gelu_erf post-op, x * Sigmoid(x) a swish
// post-op (or eltwise anchors). Reshape-like ops are views, Transpose a reorder, Concat copies or a
// concat, Slice and Split a reorder of a window (onednn_ops_layout.cc); a channel Concat followed
// by a channel shuffle is one host step that interleaves the groups (onednn_shuffle.cc).
//
// Algorithms. A dense 3x3 stride-1 f32 conv asks for Winograd and takes direct where oneDNN has no
// Winograd kernel (onednn_ops.cc); every other conv is direct.
//
// Layouts. Convs pick their layouts (any), except that a conv whose source is in channel blocks
// (aBcd16b: a Winograd conv's output) keeps them for its source and output where oneDNN has such
// a kernel; on AVX-512 CPUs a depthwise conv starts channel blocks where they would last, and the
// conv in front of it writes them (onednn_blocks.cc); deconvs read and write nhwc (onednn_ops.cc). Concat along channels copies whole blocks
// when some input is blocked, else nhwc or plain slabs (onednn_ops_layout.cc), and of one image
// in plain or whole blocks its inputs' producers write their slabs in place
// (onednn_concat_regions.cc); a Transpose between NCHW and NHWC of a value already in the other
// order is a view; a MatMul against one matrix folds A's batch dims into rows; pooling,
// batch norm, eltwise and binary run in whatever layout their input has; MatMul, Gemm, softmax and
// layer norm want plain row-major inputs. Values stay in the producer's layout, and a reorder appears only where a consumer or a
// function output needs another one, so a chain of convs inside one function stays blocked. A
// value some consumer reads plain gets a plain copy *beside* its own memory (once), and every other
// reader keeps the original: a decomposed HardSwish, y * Clip(y + 3) / 6, on an nhwc conv output
// stays nhwc (one binary primitive with post-ops) instead of bouncing nhwc -> plain -> nhwc. A
// full-size binary takes the layout of whichever operand is not plain.
//
// Weights are function inputs: the reorder to a primitive's layout runs on the first run and is
// cached against the input's pointer (a new pointer reorders again); weights that are constants
// of the function are reordered at compile time.
//
// Memory. Intermediate buffers whose lifetimes (the steps touching them) do not overlap share one
// arena, so each step writes into recently used, cached bytes (onednn_memory_plan.cc). An inference
// BatchNormalization over blocks or nhwc is a depthwise 1x1 conv with folded weights
// (onednn_batchnorm.cc).
//
// Precision variant `onednn_bf16` (the same compiler, Precision::bf16): convolutions, deconvolutions
// and matmuls/Gemms read bf16 sources and weights (reorders f32 -> bf16 in front of them; weights
// once, cached), accumulate in f32 and write f32, so post-ops, every other primitive and the
// function's boundary stay f32. A function with no such anchor is KernelUnsupported (it would be
// onednn under another name), and so is every function on a CPU without native bf16
// (onednn_bf16.cc): oneDNN would emulate bf16 there, slower than f32.
//
// Precision variant `onednn_int8` (the same compiler, Precision::int8): an fp32 function whose
// convolutions and matmuls read a value with a calibrated range (Value::range, set by an accuracy
// budget) run as u8 x s8 primitives: the source quantized by a reorder with that range's scale
// and zero point, weights per output channel by a host step (redone when their pointer changes),
// the result f32, scaled per channel by a post-op, with the f32 post-op chain after it
// (onednn_int8_variant.cc). The boundary and every other primitive stay f32. A function with no
// such anchor is KernelUnsupported.
//
// Quantized models: a QDQ group or QLinearConv/QLinearMatMul is one int8 convolution or matmul,
// ConvInteger/MatMulInteger exact int32 ones, a quantized residual sum one host pass; Q, DQ, Cast
// to f32 and DynamicQuantizeLinear alone run as reorders, a binary division or host passes
// (onednn_qdq.h, onednn_int8.cc, onednn_integer.cc, onednn_host_quant.h). Integer tensors appear
// only around those ops.
//
// Anything else (an op oneDNN lacks, a dtype other than f32 outside the quantized ops, MaxPool's
// Indices, Gemm with alpha != 1) is KernelUnsupported: no fallback to another backend's kernels.
#pragma once

#include <memory>
#include <string>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

std::unique_ptr<BackendCompiler> make_onednn_compiler();
std::unique_ptr<BackendCompiler> make_onednn_bf16_compiler();
std::unique_ptr<BackendCompiler> make_onednn_int8_compiler();

// Whether this CPU computes bf16 natively (AVX512_BF16 or AMX-BF16, from cpuid, and oneDNN's
// dispatcher allowed to use it); when not, `why` says what is missing.
bool cpu_has_native_bf16(std::string* why = nullptr);

}  // namespace tessera
