// Folding of shape computations at import (internal to the frontend).
//
// Exporters compute reshape targets at run time: Shape -> Cast -> Slice -> Concat -> Reshape.
// With static input shapes all of these are constants, but ONNX's data propagation does not
// cover every op and opset (opset-9 Slice with attributes, Cast chains), so a Reshape's output
// shape can stay unknown. fold_shape_computations evaluates such nodes when every input is a
// constant with data (or, for Shape, has a known type) and the result is a small integer tensor,
// and turns their outputs into constants. The importer alternates ONNX inference and folding
// until nothing changes; folded nodes, like folded Constant nodes, belong to no partition.
// Conditions on shapes fold too (Size, Equal, Not, Cast to bool), so that an If guarding
// shape-dependent code can be inlined (if_inlining.h).
//
// Scale: only tensors up to kMaxFoldElements elements are folded; this is about shapes, not data.
#pragma once

#include <optional>
#include <vector>

#include "tessera/graph.h"

namespace tessera::detail {

inline constexpr int64_t kMaxFoldElements = 64;

// Folds what it can among nodes not yet folded; marks them in `folded` and their outputs as
// known constants. Returns how many nodes it folded.
int fold_shape_computations(Graph& g, std::vector<char>& known, std::vector<char>& folded);

// The values of an integer constant with data (at most kMaxFoldElements of them), or nullopt.
std::optional<std::vector<int64_t>> constant_ints(const Graph& g, ValueId v);

}  // namespace tessera::detail
