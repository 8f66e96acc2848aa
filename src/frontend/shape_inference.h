// Static shapes for every value, from ONNX's own shape inference (internal to the frontend).
//
// Both importers build a Graph whose intermediate values may have unknown types (`known[v]` is
// false), then call infer_shapes: the Graph is written as a ModelProto (small constants as
// initializers so data propagation can fold Shape -> Gather -> Concat -> Reshape chains; weights
// as typed inputs, so no weight bytes are copied), ONNX infers in strict mode, and the results
// are read back. A declared type that contradicts the inferred one or an inference error is a
// UserError naming the file and the node. Outputs ONNX cannot resolve stay unknown; after
// constant folding (constant_folding.h) the importer calls require_known_types.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera::detail {

// Nodes with skip[n] set (folded ones) are left out; their outputs are constants by then.
void infer_shapes(Graph& g, std::vector<char>& known, const std::vector<char>& skip, const std::string& file);
void require_known_types(const Graph& g, const std::vector<char>& known, const std::vector<char>& skip,
                         const std::string& file);

}  // namespace tessera::detail
