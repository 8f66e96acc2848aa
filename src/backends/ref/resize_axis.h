// Resize's per-axis sampling map (ONNX opset 11-17), shared by ref's kernel and the halide backend
// so that both read coordinate_transformation_mode and nearest_mode the same way.
//
// For one axis of extent `in` resized to `out`, output coordinate o maps to a source coordinate x
// (the transformation mode, with `scale` = the scales input or out/in), then to taps: nearest mode
// takes one tap (by nearest_mode), linear floor(x) and floor(x)+1 with weights 1-r and r (r = 0:
// one tap). Tap indices are clamped to [0, in), as ONNX's reference pads with edge values. An empty
// tap list means "outside the crop box" (tf_crop_and_resize: the extrapolation value).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera::ref {

struct ResizeTap {
  int64_t index;
  double weight;
};

struct ResizeAxisMap {
  std::vector<std::vector<ResizeTap>> taps;  // per output coordinate; empty = extrapolate
};

// Throws KernelUnsupported for a nearest_mode ref does not implement.
ResizeAxisMap resize_axis_map(const Node& n, bool linear, const std::string& coord_mode, double scale, int64_t in,
                              int64_t out, double roi_lo, double roi_hi);

}  // namespace tessera::ref
