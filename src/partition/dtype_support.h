// DTypeSupport: the element types a backend takes, per op, and the node test its partition rule
// applies to seeds, so that no candidate holds a tensor its compiler would refuse.
//
// Before, a backend's spec said only which ops it takes; a compiler refused an f16 or i64 tensor
// when the candidate was compiled, after the search had priced it as if it ran (roofline), or
// the candidate was measured Invalid one compile at a time. Now the spec says which dtypes, and a
// node whose tensors are not all among them is never a seed, so no candidate of the backend,
// fused or not, contains it:
//
//   onednn "dtypes": ["f32", "f16", "bf16"]
//   Conv(x: f16, W: f16 weight, B: f16 weight) -> f16      a seed (f16 is listed)
//   Gather(x: f32, i: i64 computed) -> f32                  refused: "i64 tensor (takes f32, f16, bf16)"
//   Reshape(x: f32, shape: i64 constant) -> f32             a seed: the shape is not a tensor it computes on
//
// A node's tensors are every value it reads or writes except constants that are not weights
// (Value::is_weight: shapes, axes, indices, scalar operands, Resize scales). Those shape the
// computation and compilers read them as attributes; weights are parameters of the outlined
// function, so their dtype is the compiler's business like an activation's.
//
// Per op: "dtypes": {"*": ["f32"], "Cast": ["f32", "f16"]} gives Cast its own list; an op without
// an entry uses "*"; a spec without "dtypes" takes every dtype (ref, and declarative backends
// written before the field existed).
//
// Per operand: "QLinearConv[3]": ["i8"] gives input 3 of QLinearConv (its filter) a list of its
// own, which applies to that operand whatever it is, constants included: oneDNN's int8
// convolutions take s8 filters only, so a QLinearConv with u8 filters is no seed of onednn
// (its other operands keep the op's list):
//
//   onednn "dtypes": {"QLinearConv": ["u8", "i8"], "QLinearConv[3]": ["i8"], ...}
//   QLinearConv(x: u8, ..., w: u8 constant, ...) -> u8      refused: "u8 operand 3 of QLinearConv (takes i8)"
//
// What a listed dtype means is the backend's business: the f32 backends list f16/bf16 because
// they compute them in f32 (backend_compiler.h: widens_half).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera {

struct DTypeSupport {
  bool all = true;                                   // no "dtypes" field: every dtype
  std::vector<DType> default_dtypes;                 // "*": for ops without their own list
  std::map<std::string, std::vector<DType>> per_op;  // op -> its own list
  std::map<std::string, std::map<size_t, std::vector<DType>>> per_input;   // op -> input index -> its list

  // The dtypes `op` takes (all == true: meaningless).
  const std::vector<DType>& dtypes_of(const std::string& op) const;
  // Why node `n` of `g` is refused ("f16 tensor (takes f32)"), or nullopt when every tensor of it
  // has a dtype the op takes. The reason names no node, so rejections count by reason.
  std::optional<std::string> refuses(const Graph& g, const Node& n) const;
  // "f32,f16,bf16" or "f32,f16,bf16; Cast: f32,f16; QLinearConv[3]: i8" (for rule descriptions),
  // "*" when all.
  std::string describe() const;
};

}  // namespace tessera
