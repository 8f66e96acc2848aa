// Half-precision functions on f32 backends: compile as f32, convert at the boundary.
//
// oneDNN, XNNPACK, Eigen, OpenBLAS and Halide compute in f32 here. An f16 (or bf16) model still
// runs on them the way ONNX Runtime's CPU provider runs f16 nodes it has no f16 kernel for:
// Casts around the region. BackendCompiler::compile does it for every such backend, once:
//
//   fn(x: f16, W: f16) { Conv(x, W) -> Relu } -> y: f16
//     widen_function(fn)  = fn'(x: f32, W: f32) { Conv -> Relu } -> y: f32   (compile_impl(fn'))
//     run(x, W -> y)      = x' = f32(x); W' = f32(W); fn'(x', W' -> y'); y = f16(y')
//
// Every f16/bf16 value of the function becomes f32: parameters, intermediates, results, constant
// data (converted once, at compile time), Tensor attributes, and the `to` of Casts (a Cast to f16
// inside the function becomes an f32 copy). Intermediates thus stay in f32 between the function's
// ops: one rounding per function result instead of one per node, so the function is at least as
// accurate as the node-by-node f16 computation ref does (half_kernels.h), not bit-identical.
//
// The conversions run inside the compiled function, so a measured cost includes them: a candidate
// on a widening backend is priced with its casts, and the search weighs them against ref running
// the region in f16. Weights are parameters that arrive on each call (backend_compiler.h), so they
// are converted on each call too; their cost is in the measurement like the activations'.
// Buffers for the f32 copies belong to the compiled function (workspace_bytes counts them).
#pragma once

#include <memory>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

// True when some value of `fn`, or a Cast's target, is f16 or bf16.
bool has_half_values(const Graph& fn);
// `fn` with every f16/bf16 value, constant and Cast target turned f32 (above).
Graph widen_function(const Graph& fn);
// A compiled function with fn's signature that runs `inner` (compiled from widen_function(fn))
// between the conversions above.
std::unique_ptr<CompiledFunction> make_widened_function(const Graph& fn, std::unique_ptr<CompiledFunction> inner);

}  // namespace tessera
