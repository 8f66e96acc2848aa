// Function identity: structural hash and equality of a Graph seen as a function.
//
// Used by the cost database (one cost per structurally equal candidate) and by outlining with
// reuse (structurally equal partitions share one function). Two functions are equal when they
// have the same ops, attributes, value types and wiring, in the same order:
//
//   f(%p0: f32[64,64,3,3] weight) { Conv(%x, %p0) }  ==  f(%p0: same type, other values)
//   Reshape(%x, shape=[1,-1])                        !=  Reshape(%x, shape=[-1,1])
//
// Names of nodes and values do not count. Weights (Value::is_weight) count by type only: they are
// parameters of the outlined function. Every other constant counts by value. The hash is stable
// across runs and machines (FNV-1a over a canonical byte stream, never std::hash), because it keys
// a persistent database.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/graph.h"

namespace tessera {

uint64_t structural_hash(const Graph& fn);
// FNV-1a 64 of `bytes`, continuing from `h` (default: the FNV offset basis). Every stable hash in
// tessera (structural hashes, fingerprints, seeds) is this one function.
inline constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ull;
uint64_t fnv1a64(std::string_view bytes, uint64_t h = kFnvOffsetBasis);
bool structurally_equal(const Graph& a, const Graph& b);
// The canonical byte stream both are defined by: structural_hash(f) == fnv1a64(canonical_form(f))
// and structurally_equal(a, b) == (canonical_form(a) == canonical_form(b)). For callers that
// hash and compare many functions: computed once per function, not once per comparison.
std::string canonical_form(const Graph& fn);
std::string hash_hex(uint64_t h);   // 16 lower-case hex digits

}  // namespace tessera
