// Resource limits on what a file may claim.
//
// A model can say anything about sizes: a 2^40-element initializer, a billion nodes, an input
// bound to 1048576x1048576. tessera refuses such claims up front with a clear message (exit 2)
// instead of allocating, overflowing an int64 product or handing kernels counts they cannot index
// (OpenBLAS and oneDNN take 32-bit counts in places). Every loader checks: the ONNX and JSON
// importers (initializers, inputs, constants, every inferred value, the node count) and the .npy
// reader. Real models stay far below: resnet18 has 69 nodes and 2.4M-element tensors at most.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/tensor_type.h"

namespace tessera {

// No tensor may hold more than 2^31 - 1 elements (8 GiB of f32).
inline constexpr int64_t kMaxTensorElements = (int64_t{1} << 31) - 1;
// No graph may have more than 2^24 nodes.
inline constexpr size_t kMaxGraphNodes = size_t{1} << 24;

// Empty when `t` is within the limit, else the reason
// ("f32[1048576,1048576] has 1099511627776 elements, more than tessera's limit of 2147483647 per tensor").
std::string size_limit_problem(const TensorType& t);

}  // namespace tessera
