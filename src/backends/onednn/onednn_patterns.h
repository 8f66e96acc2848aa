// Decomposed ops the onednn compiler recognises inside a function and runs as one primitive (or
// one post-op), the way ONNX Runtime's graph optimizer fuses them. Internal to src/backends/onednn/.
//
// Terms: an exporter writes LayerNormalization and erf-GELU as chains of elementary ops. The
// recogniser finds them structurally in the flat function the compiler receives (composites do
// not reach the compiler; the spec's patterns, data/backends/onednn.json, only make sure such
// candidates exist):
//
//   layer norm  m = mean(x, last axis); d = x - m; v = mean(Pow(d, 2)); s = Sqrt(v + eps)
//               y = d / s [* gamma] [+ beta]          -> layer_normalization_forward(eps, scale, shift)
//               (mean: ReduceMean over the last axis, or the GlobalAveragePool import makes of
//               it on a rank-3 value; the square Pow(d, 2) or Mul(d, d))
//   erf-GELU    y = x * (Erf(x / sqrt 2) + 1) * 0.5   -> eltwise_gelu_erf (a post-op after a MatMul)
//               (any order of the two Muls and of their operands, 1 + Erf or Erf + 1)
//   SiLU        y = x * Sigmoid(x)                    -> eltwise_swish (a post-op after a Conv:
//               EfficientNet, YOLO; x * Sigmoid(x) or Sigmoid(x) * x)
//   HardSwish   y = x * Clip(x + 3, 0, 6) / 6         -> eltwise_hardswish (PaddleOCR's exports;
//               / 6 or * (1/6), before or after the product; x * HardSigmoid(x) with alpha 1/6,
//               beta 0.5, as torch exports it to opsets without HardSwish)
//
// Every inner value must be used only inside the group and must not be a function output; the
// constants (2, eps, sqrt 2, 1, 0.5) are checked by value; gamma/beta must be [inner]-sized
// vectors along the last axis (function inputs after extract_function, or constants). What is
// not needed for correctness: recognising other spellings (Mul by 1/sqrt(2), rsqrt);
// they simply run op by op. Matching is O(group size) per candidate root.
#pragma once

#include <optional>
#include <vector>

#include "tessera/graph.h"

namespace tessera::onednn {

struct LayerNormMatch {
  std::vector<NodeId> nodes;          // every node of the group, ascending
  ValueId x = kNoValue, gamma = kNoValue, beta = kNoValue, out = kNoValue;
  float eps = 0.0f;
};

// A decomposed unary function of x that oneDNN has as one eltwise algorithm.
struct UnaryMatch {
  enum class Kind { gelu_erf, swish, hardswish };
  Kind kind = Kind::gelu_erf;
  std::vector<NodeId> nodes;          // ascending
  ValueId x = kNoValue, out = kNoValue;
};

// A layer norm whose first mean (ReduceMean or GlobalAveragePool) is node `mean`.
std::optional<LayerNormMatch> match_layer_norm(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers,
                                               NodeId mean);
// An erf-GELU of value x (x's consumers are exactly the group's two entry nodes).
std::optional<UnaryMatch> match_gelu(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, ValueId x);
// A SiLU of value x (x's consumers are exactly the Sigmoid and the Mul).
std::optional<UnaryMatch> match_swish(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, ValueId x);
// A HardSwish of value x (x's consumers are exactly the group's two entry nodes).
std::optional<UnaryMatch> match_hardswish(const Graph& fn, const std::vector<std::vector<NodeId>>& consumers, ValueId x);

}  // namespace tessera::onednn
