// The NCHW <-> NHWC permutations at an XNNPACK function's boundary (xnnpack_layout.cc), against
// the index formula, for planes taller than they are wide and the other way round (the two loop
// orders of the tiled transpose) and sizes that are not multiples of its 16x16 tiles.
#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "backends/xnnpack/xnnpack_layout.h"

using namespace tessera::xnnpack;

TEST_CASE("xnnpack layout: nchw_to_nhwc and nhwc_to_nchw permute every element, both tile orders") {
  const std::vector<std::array<size_t, 4>> shapes = {
      {1, 21, 56, 56},   // few channels, a large plane: the rows-inner order back to NCHW
      {2, 37, 5, 3},     // more channels than plane elements: the row-major order
      {1, 16, 4, 4}, {1, 3, 1, 1}, {3, 1, 7, 9}, {1, 17, 17, 1}};
  for (const auto& d : shapes) {
    CAPTURE(d[0], d[1], d[2], d[3]);
    const size_t n = d[0] * d[1] * d[2] * d[3];
    std::vector<float> nchw(n), nhwc(n), back(n, -1.0f);
    for (size_t i = 0; i < n; ++i) nchw[i] = static_cast<float>(i);
    nchw_to_nhwc(nchw.data(), nhwc.data(), d);
    bool ok = true;
    for (size_t b = 0; b < d[0]; ++b)
      for (size_t c = 0; c < d[1]; ++c)
        for (size_t h = 0; h < d[2]; ++h)
          for (size_t w = 0; w < d[3]; ++w) {
            const size_t from = ((b * d[1] + c) * d[2] + h) * d[3] + w;
            const size_t to = ((b * d[2] + h) * d[3] + w) * d[1] + c;
            ok = ok && nhwc[to] == nchw[from];
          }
    CHECK(ok);
    nhwc_to_nchw(nhwc.data(), back.data(), d);
    CHECK(back == nchw);
  }
}
