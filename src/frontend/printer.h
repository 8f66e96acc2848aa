// A stable, Relay-like text form of a Graph, for golden tests, `tessera print` and debugging.
//
//   graph tiny(%x: f32[1,4]) {
//     %w = constant f32[4,4] weight
//     %0 = MatMul(%x, %w) /* Gemm_0, ty=f32[1,4] */
//     %1 = Relu(%0) /* r0, ty=f32[1,4] */
//     return %1
//   }
//
// Intermediate values print as %<node index> (%<node index>.<output> for multi-output nodes), so
// node indices are visible; inputs and constants print by name. Attributes print sorted by name.
#pragma once

#include <string>

#include "tessera/graph.h"

namespace tessera {

std::string print_graph(const Graph& g);
// How a value is referred to in the printed form ("%3", "%5.1", "%x").
std::string value_ref(const Graph& g, ValueId v);

// The pieces print_graph is made of, shared with emit's module printer:
// "%3 = Conv(%x, %w) {pads=[1,1,1,1]}" (no comment, no newline); `op_text`, when not empty,
// replaces "domain.Op" (emit prints calls as "@symbol").
std::string print_node_head(const Graph& g, NodeId n, const std::string& op_text = "");
// "f32[1,64,56,56], i64[2]": a node's output types.
std::string print_output_types(const Graph& g, NodeId n);
// One line per constant: "<indent>%w = constant f32[64,3,7,7] weight shape-only\n".
std::string print_constants(const Graph& g, const std::string& indent);

}  // namespace tessera
