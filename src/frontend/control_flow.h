// Control-flow nodes at import: closing If branches over the enclosing graph (internal).
//
// An ONNX branch reads values of the enclosing graphs by name. tessera's Graph has no scopes, so
// the importer closes each branch:
//
//   y = If(c) {then: t = Add(x, w) -> t}        x: an intermediate, w: an initializer
//   ==> y = If(c, x) {then: inputs [x], constants [w], t = Add(x, w) -> t}
//
//   1. before ordering nodes, every name a node's sub-graphs read but do not define (free names,
//      nested sub-graphs included) becomes an extra input of the node, so the node is ordered
//      after their producers and the partitioner sees the dependence (add_captures);
//   2. once those values have types, each branch is built as a Graph of its own (build_graph,
//      recursively: nested Ifs are inlined or closed in turn): captured constants with data are
//      copied in (data shared), every other captured value becomes a branch input, in the node's
//      input order; the node keeps the condition and those values as inputs, and both branches
//      as GraphAttr attributes. The branches' output types must agree; they give the node's.
// A branch read from JSON already lists its inputs: they match the node's inputs after the
// condition, and it has no free names. Ifs whose condition folds at import never get here
// (if_inlining.h). Loop and Scan are not supported: import says so, naming the node.
#pragma once

#include <string>
#include <vector>

#include "graph_builder.h"

namespace tessera::detail {

// Names `g` reads (node inputs, its outputs, its nodes' sub-graphs' free names) that it does not
// define (inputs, constants, node outputs), in order of first use.
std::vector<std::string> free_names(const RawGraph& g);

// Step 1 for each node with sub-graphs: their free names appended to its inputs (each once, not
// already an input).
void add_captures(std::vector<RawNode>& nodes);

// Step 2 for If node `id` built from `raw`: builds both branches, rewrites the node's inputs and
// attributes, types its outputs (known[out] = 1). Every input of the node must have its type.
void close_if(Graph& g, NodeId id, const RawNode& raw, std::vector<char>& known, const std::string& file);

}  // namespace tessera::detail
