// Constant folding at import, by running the `ref` backend's kernels (internal to the frontend).
//
// Exporters compute shapes inside the graph. torch's `cls_token.expand(n, -1, -1)` becomes
// Shape -> Gather -> Concat -> Equal -> Where -> Expand; Swin's window padding becomes
// Shape -> Gather -> Mod -> Sub -> Concat -> Pad. With static input shapes all of these values are
// constants, but ONNX's shape inference propagates data through some ops and opsets only, so the
// output shape of the Expand or the Pad stays unknown. fold_constants evaluates every node whose
// inputs are all known with ref's own kernels (as ONNX Runtime folds constants with its CPU
// kernels) and turns its outputs into constants with data:
//
//   before: s = Shape(x: 1x8x32)   n = Gather(s, 0)   c = Concat(n, [-1], [-1])   e = Expand(t, Where(Equal(c, -1), 1, c))
//   after:  s, n, c and the Where are constants     e = Expand(t, [1, 1, 1])    Expand's shape is inferable
//
// Known inputs are constants with data, and, for Shape and Size, any value of known type: these
// read only their input's type, so it is passed as a view without data. The importer alternates
// ONNX's inference and this pass until neither learns more (graph_builder.h): a folded value goes
// into the next inference as an initializer, which types its readers, which may then fold in turn.
// Every op ref runs therefore folds, shape arithmetic of any depth leaves static shapes behind, and
// there is one evaluator, ref's, checked against ONNX's node tests. Conditions fold too (Size,
// Equal, Not, Cast to bool), so an If guarding shape-dependent code can be inlined (if_inlining.h).
//
// Left as nodes: ops ref has no kernel for; DequantizeLinear of a tensor (an int8 weight stays
// int8 for the backends that compute in int8); control flow (an If is inlined when its condition
// folds; Loop and Scan are closed over what they read, control_flow.h); ops of another domain;
// nodes reading a constant without data (shape-only weights); nodes whose kernel refuses its
// inputs (the plan's run reports it); and nodes with an output of more than kMaxFoldElements
// elements, so that import memory stays bounded: folding is for shapes and small tables, not for
// weights. Folding is not needed for correctness where shapes are known: an unfolded node computes
// the same value when the plan runs.
//
// Scale: one pass is one walk over the nodes; each fold runs one kernel on at most
// kMaxFoldElements output elements.
#pragma once

#include <optional>
#include <vector>

#include "tessera/graph.h"
#include "backends/kernel.h"

namespace tessera::detail {

// The largest output a fold may produce, in elements. Equal to the size up to which shape
// inference receives constants with their data (shape_inference.h), so that every folded value
// can type its readers.
inline constexpr int64_t kMaxFoldElements = 4096;

// Folds what it can among nodes not yet folded, in node order (so a chain folds in one pass when
// its types are known), with `kernels` (ref's); marks them in `folded` and their outputs known.
// Returns how many nodes it folded.
int fold_constants(Graph& g, std::vector<char>& known, std::vector<char>& folded, const KernelRegistry& kernels);

// The values of an integer constant with data (at most kMaxFoldElements of them), or nullopt.
std::optional<std::vector<int64_t>> constant_ints(const Graph& g, ValueId v);

}  // namespace tessera::detail
