// Linear Resize of plain NCHW planes as a host pass in a oneDNN function (onednn_resize.cc).
// Internal to src/backends/onednn/.
//
// Separable: each input row is first resized along W (a gather of two taps per output column,
// IH x OW of them), then each output row is the blend of two of those rows (contiguous, OH x OW,
// vectorized). Upsampling by 8 (a segmentation head's 28 -> 224) gathers 8x fewer values than
// the other order would. Taps come from ref's resize_axis_map, so every coordinate mode of
// linear Resize reads as ref reads it.
//
// This header exposes only std types: the .cc is built with -march=native (TESSERA_NATIVE), the
// rest of the backend is not (see src/backends/CMakeLists.txt).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::onednn {

// Per output coordinate: two source indices and their weights (one tap: i1 = i0, w1 = 0).
struct LinearTaps {
  std::vector<int64_t> i0, i1;
  std::vector<float> w0, w1;
};

// y[p][o][k] for p < planes, o < rows.size, k < cols.size, from x[p] of ih x iw; planes on
// OpenMP's team.
void resize_linear_planes(const float* x, float* y, int64_t planes, int64_t ih, int64_t iw, const LinearTaps& rows,
                          const LinearTaps& cols);

}  // namespace tessera::onednn
