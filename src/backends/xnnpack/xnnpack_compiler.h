// The `xnnpack` backend's compiler: a function becomes one XNNPACK subgraph and one runtime
// (Debian's libxnnpack-dev, a 2022 snapshot: the subgraph API xnn_define_* /
// xnn_create_runtime_v2 / xnn_setup_runtime / xnn_invoke_runtime).
//
//   fn(x, W, B, r) { Conv(x, W, B) ─▶ Add(., r) ─▶ Clip(0, 6) } -> y
//     compile:  tensors x', r' (NHWC, external), W' [O,KH,KW,C] and B (static), y' (external);
//               nodes convolution_2d(x', W', B) -> t, add2(t, r') with output clamp [0, 6] -> y'
//     run:      x -> x' and r -> r' (NCHW -> NHWC), invoke, y' -> y (NHWC -> NCHW)
//
// Layout. NHWC inside the subgraph, converted only at the function's boundary (xnnpack_layout.h):
// tessera passes plain NCHW between functions, and one function keeps every intermediate NHWC.
// Where NHWC and NCHW orders agree (C == 1 or H*W == 1) the conversion is a copy.
//
// Fusion. Relu/Clip chains after Conv, ConvTranspose, fully connected, pooling and
// Add/Sub/Mul/Div become that operator's output_min/output_max, as XNNPACK fuses them.
//
// Weights. Conv, ConvTranspose, Gemm/MatMul weights and biases and PRelu slopes are static
// tensors, rearranged into XNNPACK's layouts (xnnpack_weights.h) and packed by XNNPACK when the
// runtime is created. Weights are function inputs, so their data arrives with a run: the runtime
// is created at compile time with zero weights (which validates the function: anything XNNPACK
// refuses is KernelUnsupported then), and again on the first run, keyed by the weights'
// pointers like oneDNN's cached reorders; later runs with the same pointers only set up (when a
// buffer pointer moved) and invoke. A change of thread count (set_compute_threads) also
// recreates the runtime on its next run, with the new pthreadpool (xnnpack_threadpool.h).
//
// Ops: Conv (2-D: dense, grouped, depthwise), ConvTranspose (2-D), Gemm and MatMul with 2-D
// weights (fully connected), MaxPool, AveragePool, GlobalAveragePool, Add, Sub, Mul, Div, Max,
// Min (NumPy broadcasting), Relu, Clip, LeakyRelu, Elu, HardSwish, Sigmoid, PRelu, Abs, Neg,
// Sqrt, Floor, Ceil, Round, Softmax (channel axis), BatchNormalization (inference, folded into a
// per-channel multiply + add), Resize (bilinear), Pad (constant),
// DepthToSpace (DCR), and Reshape/Flatten/Squeeze/Unsqueeze where the NHWC order is the plain
// one. Not in this snapshot: Concat, Transpose, nearest Resize, Tanh. Anything else, f32 only,
// is KernelUnsupported naming the node and the reason: no fallback to another backend.
#pragma once

#include <memory>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

std::unique_ptr<BackendCompiler> make_xnnpack_compiler();

}  // namespace tessera
