// NCHW <-> NHWC at a function's boundary (see xnnpack_layout.h).
#include "backends/xnnpack/xnnpack_layout.h"

#include <algorithm>
#include <cstring>

namespace tessera::xnnpack {

Shape view_shape(const Shape& s, View view) {
  if (view != View::Padded4 || s.size() >= 4) return s;
  Shape p(4, 1);
  std::copy(s.begin(), s.end(), p.end() - static_cast<std::ptrdiff_t>(s.size()));
  return p;
}

std::vector<size_t> physical_dims(const Shape& s, View view) {
  const Shape v = view_shape(s, view);
  if (v.empty()) return {1};
  if (v.size() == 4 && view != View::Plain) return {static_cast<size_t>(v[0]), static_cast<size_t>(v[2]), static_cast<size_t>(v[3]),
                             static_cast<size_t>(v[1])};
  return std::vector<size_t>(v.begin(), v.end());
}

bool plain_order(const Shape& s, View view) {
  const Shape v = view_shape(s, view);
  return view == View::Plain || v.size() != 4 || v[1] == 1 || v[2] * v[3] == 1;
}

namespace {

// dst = the transpose of src, for each of `batches` row-major [rows x cols] matrices. Blocked in
// 16x16 tiles of floats: both sides then touch whole cache lines. Inside a tile the inner loop
// walks the side with the short stride, so that the 16 lines of the long-stride side are each
// finished before the next is started. The other order keeps all 16 in flight at once, and a
// long stride is often a multiple of 4 KiB (a 224x224 plane), which puts them in one cache set:
// a segmentation head's 21x224x224 output, NHWC -> NCHW, took 2.4 ms of CPU that way, 0.4 ms this
// way (Zen 4); to NHWC (few rows, long rows) the row-major order is the faster one, 0.31 ms.
void transpose_batched(const float* src, float* dst, size_t batches, size_t rows, size_t cols) {
  constexpr size_t kTile = 16;
  const bool rows_inner = rows > cols;   // dst's stride (rows) is the long one
  for (size_t n = 0; n < batches; ++n, src += rows * cols, dst += rows * cols)
    for (size_t r0 = 0; r0 < rows; r0 += kTile)
      for (size_t c0 = 0; c0 < cols; c0 += kTile) {
        const size_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
        if (rows_inner) {
          for (size_t c = c0; c < c1; ++c)
            for (size_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
        } else {
          for (size_t r = r0; r < r1; ++r)
            for (size_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
        }
      }
}

}  // namespace

// Per image, C x (H*W) becomes (H*W) x C, and back.
void nchw_to_nhwc(const float* src, float* dst, const std::array<size_t, 4>& d) {
  transpose_batched(src, dst, d[0], d[1], d[2] * d[3]);
}

void nhwc_to_nchw(const float* src, float* dst, const std::array<size_t, 4>& d) {
  transpose_batched(src, dst, d[0], d[2] * d[3], d[1]);
}

void to_view(const float* src, float* dst, const Shape& s, View view) {
  const Shape v = view_shape(s, view);
  size_t n = 1;
  for (int64_t d : v) n *= static_cast<size_t>(d);
  if (plain_order(s, view)) {
    if (n) std::memcpy(dst, src, n * sizeof(float));
    return;
  }
  nchw_to_nhwc(src, dst, {static_cast<size_t>(v[0]), static_cast<size_t>(v[1]), static_cast<size_t>(v[2]),
                          static_cast<size_t>(v[3])});
}

void from_nhwc(const float* src, float* dst, const Shape& s, View view) {
  const std::array<size_t, 4> d{static_cast<size_t>(s[0]), static_cast<size_t>(s[1]), static_cast<size_t>(s[2]), static_cast<size_t>(s[3])};
  if (view == View::Plain) nhwc_to_nchw(src, dst, d);
  else std::memcpy(dst, src, d[0] * d[1] * d[2] * d[3] * sizeof(float));
}

}  // namespace tessera::xnnpack
