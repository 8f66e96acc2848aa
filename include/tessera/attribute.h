// Node attributes, as ONNX has them.
//
// An Attribute holds one of ONNX's attribute kinds: int, float, string, their lists, a tensor
// (ConstantOfShape's value, for instance), or a sub-graph (If's then_branch and else_branch).
// A sub-graph is a frozen Graph of its own, closed: what it read from the enclosing graph by name
// (ONNX's outer scope) is either copied in as a constant (constants with data) or one of its
// inputs, fed by the node's trailing inputs in order (control_flow.h in the frontend explains it).
// Attributes are kept in a sorted map so that printing and hashing are deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tessera/tensor_type.h"

namespace tessera {

// Raw little-endian element data of a tensor, shared between values that are copies of each other.
using TensorBytes = std::vector<uint8_t>;
using TensorData = std::shared_ptr<const TensorBytes>;

// A tensor with optional data (null data = shape-only, enough for partitioning).
struct Tensor {
  TensorType type;
  TensorData data;
  bool operator==(const Tensor& o) const;
};

class Graph;

// A sub-graph attribute (GraphAttr, not partition's SubGraph); shared, because copies of a node (outlined functions) share the body.
struct GraphAttr {
  std::shared_ptr<const Graph> graph;
  bool operator==(const GraphAttr& o) const;   // equal graphs (Graph::operator==)
};

using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor, GraphAttr>;
using Attributes = std::map<std::string, Attribute>;

// Stable text, used by printers and hashing; a sub-graph prints as `graph<name: N nodes, hash>`.
std::string attribute_to_string(const Attribute& a);
// The sub-graph attribute `name`, or null.
const Graph* attr_graph(const Attributes& a, const std::string& name);

// Typed lookups with defaults; they do not throw on a missing attribute.
int64_t attr_int(const Attributes& a, const std::string& name, int64_t dflt);
double attr_float(const Attributes& a, const std::string& name, double dflt);
std::string attr_string(const Attributes& a, const std::string& name, const std::string& dflt);
std::vector<int64_t> attr_ints(const Attributes& a, const std::string& name,
                               const std::vector<int64_t>& dflt = {});

}  // namespace tessera
