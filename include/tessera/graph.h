// Graph, Node, Value: the imported model, frozen once imported.
//
// A Graph owns its Values and Nodes in two vectors and everything else refers to them by index
// (ValueId, NodeId). Nodes are stored in a topological order (producers before consumers); that
// order is the dataflow order every later stage (IndexSet, SubGraph, search) is indexed by.
//
//   %x (input) ─▶ Conv_0 ─▶ %1 ─▶ Relu_1 ─▶ %2 (output)
//   %w0 (constant) ─┘
//
// Values are of three kinds: graph inputs, constants (initializers and folded Constant nodes; their
// data is optional) and node outputs. Node names are unique: a node without a name in the model is
// named "<OpType>_<index>" (index = position in the model's node list), duplicates get "_1", "_2"...
// A missing optional input is kNoValue.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/attribute.h"
#include "tessera/tensor_type.h"

namespace tessera {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;
inline constexpr NodeId kNoNode = -1;

enum class ValueKind : uint8_t { Input, Constant, Intermediate };

struct Value {
  std::string name;
  TensorType type;
  ValueKind kind = ValueKind::Intermediate;
  NodeId producer = kNoNode;   // Intermediate only
  int producer_output = 0;     // which output of the producer
  TensorData data;             // Constant only; null = shape-only constant
  // Set at import for a constant some node reads as an operand that shapes the computation
  // (op_registry.h: is_value_input), such as Resize's float `scales`: it counts by value.
  bool shapes_computation = false;
  // Set at import (boundary_layout.h: mark_feature_maps) for an activation that no spatial op
  // (convolution, pooling, normalization over channels, resize) reads or writes, even through
  // elementwise ops: attention's [N, heads, S, d]. It crosses between functions plain, whatever
  // its shape, because no kernel that reads it wants channels last.
  bool plain_only = false;
  // The activation's calibrated range [min, max] (min <= 0 <= max), set only where an int8
  // precision variant is offered under an accuracy budget (src/runtime/int8_calibration.h):
  // the quantization scale and zero point of an int8 convolution or matmul that reads it. Part
  // of a function's identity (structural_hash) when set; unset everywhere else.
  std::optional<std::pair<float, float>> range;
  // Bias correction of the int8 convolution or matmul that writes this value, per output
  // channel (axis 1 of a Conv's output, the last axis of a MatMul's or Gemm's): the mean of
  // (int8 result - fp32 result) over the calibration data, which the int8 variant subtracts
  // (src/runtime/int8_bias_correction.h). Set beside the ranges; part of a function's identity
  // when set; empty everywhere else.
  std::vector<float> int8_bias_shift;

  bool is_constant() const { return kind == ValueKind::Constant; }
  // A weight is a parameter of an outlined function, not part of its identity (docs/design.md): a
  // floating-point constant with more than one element that no node reads as a shaping operand.
  // Other constants (integer shapes, indices, Resize scales, scalars such as Clip bounds) shape
  // the computation and count by value.
  bool is_weight() const;
};

struct Node {
  std::string name;
  std::string op;               // ONNX op type
  std::string domain;           // "" for the default ONNX domain
  Attributes attrs;
  std::vector<ValueId> inputs;  // kNoValue for a missing optional input
  std::vector<ValueId> outputs;
};

class Graph {
 public:
  std::string name;
  std::string source;            // the file it came from, for messages
  int opset = 17;
  std::vector<Value> values;
  std::vector<Node> nodes;       // topological order
  std::vector<ValueId> inputs;   // graph inputs (not constants)
  std::vector<ValueId> outputs;

  ValueId add_value(Value v);
  NodeId add_node(Node n);       // sets producer of the node's outputs

  const Value& value(ValueId id) const { return values[static_cast<size_t>(id)]; }
  Value& value(ValueId id) { return values[static_cast<size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes[static_cast<size_t>(id)]; }
  int num_nodes() const { return static_cast<int>(nodes.size()); }

  // consumers()[v] = nodes reading value v, ascending, each once.
  std::vector<std::vector<NodeId>> consumers() const;
  bool is_output(ValueId v) const;
  // Value id by name, kNoValue if none (linear scan; for tests and tools, not hot paths).
  ValueId find_value(const std::string& name) const;
  NodeId find_node(const std::string& name) const;
  int64_t parameter_count() const;   // elements in weight constants

  bool operator==(const Graph& o) const;  // structure, names, types and constant data
};

}  // namespace tessera
