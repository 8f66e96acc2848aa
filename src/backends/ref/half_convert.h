// Bulk conversions between the half-precision storage types (f16, bf16) and f32.
//
// Half-precision tensors are stored as uint16_t bit patterns (host_tensor.h). Every place that
// computes them in f32 converts whole buffers: ref's kernels widen a node's f16 inputs and round
// its outputs (half_kernels.h), and a backend that compiles an f16 function as f32 converts the
// function's parameters and results on every call (backend_compiler.h). Those conversions run
// on activations of millions of elements, so they are done a buffer at a time, with the CPU's
// F16C instructions where it has them (chosen once, at run time) and the scalar
// round-to-nearest-even conversions of host_tensor.h otherwise; both give the same bits.
//
//   widen_to_f32(f16, src, dst, n)      dst[i] = half_to_float(src[i])
//   narrow_from_f32(f16, src, dst, n)   dst[i] = float_to_half(src[i])   (nearest even)
#pragma once

#include <cstddef>

#include "tessera/tensor_type.h"

namespace tessera {

// True for the dtypes computed in f32 when a kernel or backend has no arithmetic of their own.
inline bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }

// n elements of `from` (f16 or bf16) at src, as f32 at dst.
void widen_to_f32(DType from, const void* src, float* dst, size_t n);
// n f32 elements at src, rounded to nearest even into `to` (f16 or bf16) at dst.
void narrow_from_f32(DType to, const float* src, void* dst, size_t n);

}  // namespace tessera
