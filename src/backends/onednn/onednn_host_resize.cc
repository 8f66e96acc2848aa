// Linear Resize of plain NCHW planes (see onednn_host_resize.h).
#include "backends/onednn/onednn_host_resize.h"

#include <cstddef>

namespace tessera::onednn {

void resize_linear_planes(const float* x, float* y, int64_t planes, int64_t ih, int64_t iw, const LinearTaps& rows,
                          const LinearTaps& cols) {
  const auto oh = static_cast<int64_t>(rows.i0.size()), ow = static_cast<int64_t>(cols.i0.size());
#pragma omp parallel if (planes * oh * ow >= 65536)
  {
    std::vector<float> h(static_cast<std::size_t>(ih * ow));   // the plane's rows resized along W
#pragma omp for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const float* xp = x + p * ih * iw;
      float* yp = y + p * oh * ow;
      for (int64_t r = 0; r < ih; ++r) {
        const float* xr = xp + r * iw;
        float* hr = h.data() + r * ow;
        for (int64_t k = 0; k < ow; ++k) hr[k] = cols.w0[static_cast<std::size_t>(k)] * xr[cols.i0[static_cast<std::size_t>(k)]] +
                                                 cols.w1[static_cast<std::size_t>(k)] * xr[cols.i1[static_cast<std::size_t>(k)]];
      }
      for (int64_t o = 0; o < oh; ++o) {
        const float* a = h.data() + rows.i0[static_cast<std::size_t>(o)] * ow;
        const float* b = h.data() + rows.i1[static_cast<std::size_t>(o)] * ow;
        const float w0 = rows.w0[static_cast<std::size_t>(o)], w1 = rows.w1[static_cast<std::size_t>(o)];
        float* yr = yp + o * ow;
        for (int64_t k = 0; k < ow; ++k) yr[k] = w0 * a[k] + w1 * b[k];
      }
    }
  }
}

}  // namespace tessera::onednn
