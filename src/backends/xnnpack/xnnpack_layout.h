// Layouts inside an XNNPACK subgraph, and the host-side conversions at a function's boundary.
//
// tessera passes plain (row-major, NCHW for images) tensors between functions; XNNPACK's
// convolutions, pooling and resize want NHWC. Inside one subgraph every rank-4 value is NHWC:
//
//   caller x[N,C,H,W] ─permute─▶ x'[N,H,W,C] ─▶ Conv ─▶ Clamp ─▶ ... ─▶ y'[N,H,W,C] ─permute─▶ y[N,C,H,W]
//
// and values of other ranks are kept as they are. A value of rank < 4 that a rank-4 broadcast
// op reads (a [C,1,1] bias) is seen right-aligned to rank 4 and then NHWC (View::Padded4), so
// that XNNPACK's NumPy-style broadcasting sees matching axes. When C == 1 or H*W == 1 the NHWC
// order is the plain order (a [N,C,1,1] after global pooling), and the conversion is a copy: this
// is also what lets Reshape/Flatten cross between rank 4 and other ranks without a transpose.
// A Reshape-like op whose NCHW side is a function input or output reads or writes it as stored
// (View::Plain): the boundary conversion then is a copy, not a permutation.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "tessera/tensor_type.h"

namespace tessera::xnnpack {

enum class View : unsigned char {
  Native,    // rank 4: NHWC; other ranks: as they are
  Padded4,   // right-aligned to rank 4 with leading 1s, then NHWC
  Plain,     // as stored outside the subgraph: rank 4 stays NCHW (Reshape-like ops at the boundary)
};

// The logical shape a view shows: `s` itself, or `s` padded to rank 4.
Shape view_shape(const Shape& s, View view);
// The dims XNNPACK sees (NHWC for rank 4); a scalar is {1}.
std::vector<size_t> physical_dims(const Shape& s, View view);
// True when the view's memory order is the plain order (no rank 4, or C == 1, or H*W == 1).
bool plain_order(const Shape& s, View view);
// Rank-4 permutations between NCHW and NHWC for the logical shape nchw = {N, C, H, W}.
void nchw_to_nhwc(const float* src, float* dst, const std::array<size_t, 4>& nchw);
void nhwc_to_nchw(const float* src, float* dst, const std::array<size_t, 4>& nchw);
// src (plain, shape `s`) into dst in `view`: a permutation or a copy.
void to_view(const float* src, float* dst, const Shape& s, View view);
// src (an nhwc boundary value of logical rank-4 shape `s`) into dst in `view`: a copy for the
// NHWC views, a permutation for View::Plain.
void from_nhwc(const float* src, float* dst, const Shape& s, View view);
// The pads/axes of a logical rank-4 NCHW tensor in NHWC order: {a0, a2, a3, a1}.
template <typename T>
std::array<T, 4> nhwc_order(const std::array<T, 4>& nchw) {
  return {nchw[0], nchw[2], nchw[3], nchw[1]};
}

}  // namespace tessera::xnnpack
