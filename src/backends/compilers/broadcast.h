// Numpy-style broadcasting helpers shared by the compilers (ONNX multidirectional broadcasting).
//
// A value of shape `in` broadcast to `out` is read through per-output-dimension element strides,
// 0 where `in` has (or lacks) a size-1 dimension:  in [C,1,1] -> out [N,C,H,W] = strides {0,1,0,0}.
// Shapes are right-aligned; `in` may have lower rank.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/tensor_type.h"

namespace tessera {

// True when `in` broadcasts to exactly `out`.
bool broadcasts_to(const Shape& in, const Shape& out);
// Strides of `in` per dimension of `out`; requires broadcasts_to(in, out).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
// dst[i] (= or +=) scale * in[broadcast(i)] over every element of `out`.
void broadcast_fill(const float* in, const std::vector<int64_t>& strides, const Shape& out, float* dst,
                    float scale, bool accumulate);

}  // namespace tessera
