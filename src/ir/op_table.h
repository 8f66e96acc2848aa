// The op registry's table (internal). Each ops_<family>.cc registers its ops' kinds and FLOP
// formulas here; op_registry.cc builds the table once, on first use, from all families.
#pragma once

#include <map>
#include <string>

#include "ir/op_registry.h"

namespace tessera::detail {

struct OpTable {
  std::map<std::string, OpInfo, std::less<>> ops;
  void add(const std::string& op, OpKind kind, NodeCostFn flops = nullptr) {
    ops[op] = OpInfo{op, kind, std::move(flops)};
  }
};

// Shared FLOP helpers: element counts of a node's first input / first output.
int64_t in_numel(const Graph& g, const Node& n, size_t i = 0);
int64_t out_numel(const Graph& g, const Node& n, size_t i = 0);
const Shape& in_shape(const Graph& g, const Node& n, size_t i = 0);
const Shape& out_shape(const Graph& g, const Node& n, size_t i = 0);

void register_elementwise_ops(OpTable& t);  // E and B kinds
void register_linear_ops(OpTable& t);       // A kind: Conv, MatMul, Gemm, ...
void register_shape_ops(OpTable& t);        // I kind: data movement
void register_reduction_ops(OpTable& t);    // R kind: reductions, pooling, normalisation
void register_quantized_ops(OpTable& t);    // QuantizeLinear, ConvInteger, QLinearMatMul, ...

}  // namespace tessera::detail
