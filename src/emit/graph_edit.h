// Small graph-editing helpers the emit passes share (internal to src/emit).
#pragma once

#include <vector>

#include "tessera/graph.h"

namespace tessera::emit_detail {

// The graph with only what its nodes and outputs reference: inputs first (same order), then the
// constants still read (in value order), then node outputs in node order.
Graph compact(const Graph& g);

// Shape and data of a transpose by `perm` (ONNX Transpose semantics); null data stays null.
Shape transpose_shape(const Shape& s, const std::vector<int64_t>& perm);
TensorData transpose_data(const TensorData& data, const TensorType& type, const std::vector<int64_t>& perm);

}  // namespace tessera::emit_detail
