// Half precision on ref: every kernel that computes in f32 also runs f16 and bf16 nodes.
//
// ref's kernels are written over f32/f64 (and the integer types). Rather than teach each one the
// 16-bit formats, one wrapper around every kernel of the table widens a node's f16/bf16 inputs to
// f32, runs the f32 kernel, and rounds its f16/bf16 outputs back to nearest even, as ONNX
// Runtime's CPU provider does around nodes it has no f16 kernel for:
//
//   Conv(x: f16, W: f16, B: f16) -> y: f16
//     ==> x', W', B' = f32(x), f32(W), f32(B);  conv_f32(x', W', B') -> y';  y = f16(y')
//
// All of a node's half-precision tensors become f32 together, so the dtype relations a kernel
// checks (output dtype = input dtype, Where's two branches) still hold. Each node thus computes in
// f32 and rounds once: its sums do not round at every step as f16 arithmetic would, which is more
// accurate and is what f16 CPU inference does in practice.
//
// Not wrapped: kernels that already take every dtype as it is, because they only move or convert
// elements (Transpose, Concat, Reshape, ... : widening them would round-trip exactly, at a cost),
// or take their output dtype from an attribute (Cast, ConstantOfShape), or interpret typed
// sub-graphs (If, Loop, Scan: their bodies' nodes run through this same wrapped table).
// A node without f16/bf16 tensors calls its kernel directly.
#pragma once

#include "backends/kernel.h"

namespace tessera::ref {

// `kernels` with every kernel wrapped as above, except those of ops that handle every dtype.
KernelRegistry with_half_precision(const KernelRegistry& kernels);

// True for the ops whose ref kernels take f16/bf16 as they are (not wrapped).
bool handles_half_natively(std::string_view op);

}  // namespace tessera::ref
