// Inlining of `If` nodes whose condition is known at import (internal to the frontend).
//
// Exporters guard shape-dependent code with If: silero VAD's decoder squeezes a dimension only
// "if x.shape[0] == 1", and its LSTM wrapper unsqueezes "if input.dim() == 2". With static input
// shapes the condition folds to a constant (constant_folding.h), and the If is then nothing but one
// of its branches:
//
//   c = Equal(Gather(Shape(x), 0), 1)         (folds to true)
//   y = If(c) {then: t = Squeeze(x, 0) -> t}  ==>  t = Squeeze(x, 0); y = Identity(t)
//
// The importer builds the graph, finds the first If whose condition is a constant, replaces it in
// the RawGraph by the chosen branch's initializers and nodes (they name outer values directly, as
// ONNX's scoping allows) plus one Identity per output, and builds again; simplification removes
// the Identity nodes later. Nested Ifs come up in the next round. Value names are unique across
// scopes in a valid ONNX model, so no renaming is needed; node names are made unique as usual.
//
// Cost: one rebuild (ONNX inference included) per inlined If; silero VAD has 12, built in tens of
// milliseconds each. Ifs whose condition is known only at run time are not touched here.
#pragma once

#include <string>

#include "frontend/graph_builder.h"

namespace tessera::detail {

// `raw` with the If node whose first output is `if_output` replaced by its then_branch (`cond`
// true) or else_branch. UserError when the branch is missing or its outputs do not match.
RawGraph inline_if(const RawGraph& raw, const std::string& if_output, bool cond, const std::string& file);

}  // namespace tessera::detail
