// Control-flow nodes at import: closing If branches and Loop bodies over the enclosing graph (internal).
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
// (if_inlining.h).
//
// A Loop is closed the same way (loop_closing.cc), after its formal inputs:
//
//   v_final..., scans... = Loop(M, cond, v_initial...) {body(i, cond_in, v_in...) -> (cond_out, v_out..., s...)}
//   ==> Loop(M, cond, v_initial..., captures...) {body(i, cond_in, v_in..., captures...)}
//       attrs {captured_inputs: number of captures}   (kept only when non-zero)
//
// The body's formal inputs get the node's types (i: i64, cond_in: the condition's or bool, v_in:
// v_initial's); each v_out must keep its v_in's type, as tessera's shapes are static. A scan
// output stacks one s per iteration along a new axis 0, so its type needs the trip count: M must
// be a constant at import (after constant folding) or import refuses the node, naming it; a loop
// that stops early at run time (cond_out false) is an error when it has scan outputs. A Scan is
// closed alike (scan_closing.cc); its trip count is its inputs' static length.
#pragma once

#include <string>
#include <vector>

#include "frontend/graph_builder.h"

namespace tessera::detail {

// Names `g` reads (node inputs, its outputs, its nodes' sub-graphs' free names) that it does not
// define (inputs, constants, node outputs), in order of first use.
std::vector<std::string> free_names(const RawGraph& g);

// Step 1 for each node with sub-graphs: their free names appended to its inputs, each once (a
// name that is also a formal input is appended too: inside, it is a capture). Sets formal_inputs.
void add_captures(std::vector<RawNode>& nodes);

// What node `n` reads from its input `first` on (its captures): constants with data are copied
// into the sub-graphs that read them; the other values become sub-graph inputs (`values`, in
// order, stay inputs of the node).
struct Captures {
  std::vector<std::pair<std::string, TensorType>> inputs;
  std::vector<std::pair<std::string, Tensor>> constants;
  std::vector<ValueId> values;
};
Captures split_captures(const Graph& g, const Node& n, size_t first);

// Sub-graph `b` built as a Graph (build_graph): its first formal.size() inputs typed `formal`,
// then the captured inputs, and the captured constants it reads.
std::shared_ptr<const Graph> build_body(const RawGraph& b, const std::vector<TensorType>& formal, const Captures& c,
                                        int opset, const std::string& file);

// Gives node `n`'s outputs the types its body computes (`types`, one per output), refusing one
// the model declared otherwise; marks them known. `place` names the node in the message.
void type_outputs(Graph& g, const Node& n, const std::vector<TensorType>& types, std::vector<char>& known,
                  const std::string& file, const std::string& place);

// The sub-graph attribute `name` of `raw`, or null.
const RawGraph* raw_subgraph(const RawNode& raw, const std::string& name);

// Step 2 for If node `id` built from `raw`: builds both branches, rewrites the node's inputs and
// attributes, types its outputs (known[out] = 1). Every input of the node must have its type.
void close_if(Graph& g, NodeId id, const RawNode& raw, std::vector<char>& known, const std::string& file);

// The same for Loop node `id` (loop_closing.cc): builds the body, rewrites inputs and attributes,
// types the outputs.
void close_loop(Graph& g, NodeId id, const RawNode& raw, std::vector<char>& known, const std::string& file);

// The same for Scan node `id` (scan_closing.cc; opset 9+): the body's inputs are the states and
// one slice of each scan input, the outputs' types follow from the scan length.
void close_scan(Graph& g, NodeId id, const RawNode& raw, std::vector<char>& known, const std::string& file);

}  // namespace tessera::detail
