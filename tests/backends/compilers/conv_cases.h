// Convolution functions that more than one backend's compiler tests check against ref, built in
// one place so that each backend is held to the same case:
//
//   check_against_ref("onednn", grouped_conv_relu());
//   check_against_ref("xnnpack", grouped_conv_relu());
#pragma once

#include <vector>

#include "backends/compilers/function_builder.h"

namespace tessera::testing {

// The output shape of an N-D convolution of x (NCHW...) with O filters of extent k, strides s,
// pads p (begins, then ends) and dilations d.
inline Shape conv_out(const Shape& x, int64_t O, const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                      const std::vector<int64_t>& p, const std::vector<int64_t>& d) {
  Shape y{x[0], O};
  for (size_t i = 0; i < k.size(); ++i)
    y.push_back((x[2 + i] + p[i] + p[i + k.size()] - ((k[i] - 1) * d[i] + 1)) / s[i] + 1);
  return y;
}

// Conv with 2 groups, uneven pads, strides and dilations per axis, a bias, then Relu (a post-op
// for oneDNN, a fused clamp for XNNPACK).
inline Graph grouped_conv_relu() {
  FunctionBuilder b;
  const Shape xs{2, 8, 11, 9};
  const std::vector<int64_t> k{3, 3}, s{2, 1}, p{1, 0, 1, 2}, d{1, 2};
  const Shape ys = conv_out(xs, 12, k, s, p, d);
  const ValueId x = b.input("x", xs), w = b.input("w", {12, 4, 3, 3}), bias = b.input("b", {12});
  const ValueId c = b.node("Conv", {x, w, bias}, ys,
                           {{"group", int64_t{2}}, {"strides", s}, {"pads", p}, {"dilations", d}, {"kernel_shape", k}});
  b.output(b.node("Relu", {c}, ys));
  return std::move(b.g);
}

}  // namespace tessera::testing
