// Node attributes, as ONNX has them.
//
// An Attribute holds one of ONNX's attribute kinds: int, float, string, their lists, or a tensor
// (ConstantOfShape's value, for instance). Sub-graph attributes (If/Loop bodies) are not modelled:
// the importer keeps the node as opaque and records the attribute as a string naming the graph.
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

using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor>;
using Attributes = std::map<std::string, Attribute>;

std::string attribute_to_string(const Attribute& a);   // stable text, used by printers and hashing

// Typed lookups with defaults; they do not throw on a missing attribute.
int64_t attr_int(const Attributes& a, const std::string& name, int64_t dflt);
double attr_float(const Attributes& a, const std::string& name, double dflt);
std::string attr_string(const Attributes& a, const std::string& name, const std::string& dflt);
std::vector<int64_t> attr_ints(const Attributes& a, const std::string& name,
                               const std::vector<int64_t>& dflt = {});

}  // namespace tessera
