// From a model as read from a file to a frozen Graph (internal to the frontend).
//
// Both importers fill a RawGraph (names as strings, node order as in the file, output types
// optional) and hand it to build_graph, which does everything the two formats share:
//   1. folds Constant nodes into constants;
//   2. names unnamed nodes "<OpType>_<index>" and makes duplicate names unique ("_1", "_2", ...);
//   3. rejects duplicate value names, undefined references and cycles, naming the node;
//   4. orders nodes topologically (Kahn's algorithm, ties by file order: a file already in order
//      keeps its order);
//   5. infers every missing type with ONNX's shape inference and checks the declared ones;
//   6. inlines every `If` whose condition is known at import (if_inlining.h) and starts over;
//   7. closes the other `If`s, every `Loop` and `Scan` over what their sub-graphs read (control_flow.h).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera::detail {

struct RawGraph;

struct RawNode {
  std::string name;
  std::string op;
  std::string domain;
  Attributes attrs;
  std::vector<std::string> inputs;   // "" = missing optional input
  std::vector<std::string> outputs;
  std::vector<std::optional<TensorType>> output_types;  // declared types, parallel to outputs
  std::string place;                 // where it is in the file, for messages ("nodes[3]")
  // Sub-graph attributes (If's then_branch/else_branch, Loop's body), by attribute name. They
  // read values of the enclosing graphs by name (ONNX's outer scope).
  std::vector<std::pair<std::string, std::shared_ptr<const RawGraph>>> subgraphs;
  // How many of `inputs` the file gives; add_captures (control_flow.h) appends after them.
  size_t formal_inputs = 0;
};

struct RawGraph {
  std::string name;
  int opset = 17;
  std::vector<std::pair<std::string, TensorType>> inputs;
  // Formal inputs of a sub-graph whose file gives no static type (Loop bodies may leave the types
  // of their inputs to the node's); their entry in `inputs` is a placeholder until then.
  std::set<std::string> untyped_inputs;
  std::vector<std::pair<std::string, Tensor>> constants;
  std::vector<RawNode> nodes;
  std::vector<std::string> outputs;
};

Graph build_graph(RawGraph raw, const std::string& file);

}  // namespace tessera::detail
