// Sliding-window geometry shared by Conv, ConvTranspose and the pooling kernels.
//
// A window op over k spatial dimensions has per-dimension kernel extents, strides, dilations and
// begin/end pads. ONNX gives pads explicitly or through auto_pad (SAME_UPPER puts the odd extra
// pad at the end, SAME_LOWER at the beginning, VALID pads nothing). The output extents are those
// of the output view (the Graph's inferred type): the kernels derive begin pads from them where
// ONNX leaves the split to the implementation, and check them where it does not.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/ref/ref_util.h"

namespace tessera::ref {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
  int rank() const { return static_cast<int>(kernel.size()); }
  int64_t effective_kernel(int d) const { return (kernel[static_cast<size_t>(d)] - 1) * dilations[static_cast<size_t>(d)] + 1; }
};

// Reads kernel_shape (or `kernel` when the attribute is absent), strides, dilations, pads and
// auto_pad of a forward window op (Conv, pooling) with input spatial extents `in` and output
// extents `out`, and checks that out is what ONNX computes (ceil_mode for pooling).
Window forward_window(const Node& n, const std::vector<int64_t>& kernel, const Shape& in, const Shape& out,
                      bool ceil_mode);

// Python-style floor division (pads may be negative while deriving them).
inline int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }


}  // namespace tessera::ref
