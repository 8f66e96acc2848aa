// Hand-built functions for cost model tests: a few lines per graph, f32 unless told otherwise.
#pragma once

#include <string>
#include <vector>

#include "support/graph_builder.h"
#include "tessera/graph.h"
#include "ir/structural_hash.h"

namespace tessera::test {

using testing::GraphBuilder;

// A chain x -> ops[0] -> ops[1] -> ... on 10x10 tensors; the last value is the output.
inline Graph chain(const std::vector<std::string>& ops) {
  GraphBuilder b;
  ValueId v = b.input("x", {10, 10});
  for (size_t i = 0; i < ops.size(); ++i) v = b.op(ops[i], ops[i] + std::to_string(i), {v}, {10, 10});
  b.output(v);
  return b.g;
}

}  // namespace tessera::test
