// GemmShape: a MatMul or Gemm node as a (batched) row-major GEMM, for the eigen and blas compilers.
//
//   MatMul  A[..., M, K] x B[..., K, N] -> Y[..., M, N]  (batch dims broadcast; 1-D A is [1,K],
//           1-D B is [K,1], as numpy.matmul)
//   Gemm    Y[M, N] = alpha * op(A) op(B) + beta * C     (op = optional transpose; C broadcasts)
//
// Each batch b multiplies the M*K matrix at a + a_offset[b] by the K*N matrix at b + b_offset[b]
// into the M*N matrix at y + b * M*N. Only f32 is supported (KernelUnsupported otherwise).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph.h"

namespace tessera {

struct GemmShape {
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  ValueId a = kNoValue, b = kNoValue, c = kNoValue, y = kNoValue;   // c: Gemm's C, if any
  int64_t batch = 1;
  std::vector<int64_t> a_offset, b_offset;                          // per batch, in elements
};

// Throws KernelUnsupported for another op, a non-f32 operand or shapes it cannot express.
GemmShape gemm_shape(const Graph& fn, const Node& node);

}  // namespace tessera
