// Small graphs built directly with Graph::add_value/add_node, for partition tests.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "support/graph_builder.h"
#include "tessera/graph.h"

namespace tessera::testing {

// A random DAG of `n` nodes over one input: each node reads one or two earlier values; ops drawn
// from `ops` (unary ops get one input, binary ones two). Unread values become graph outputs.
inline Graph random_dag(std::mt19937& rng, int n, const std::vector<std::string>& unary,
                        const std::vector<std::string>& binary) {
  GraphBuilder b;
  std::vector<ValueId> values{b.input("x")};
  for (int i = 0; i < n; ++i) {
    auto pick = [&]() {
      // Prefer recent values so chains and diamonds both occur.
      std::uniform_int_distribution<size_t> d(values.size() > 4 ? values.size() - 4 : 0, values.size() - 1);
      return values[std::uniform_int_distribution<int>(0, 3)(rng) == 0
                        ? std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)
                        : d(rng)];
    };
    bool two = std::uniform_int_distribution<int>(0, 2)(rng) == 0;
    std::string name = "n" + std::to_string(i);
    if (two) {
      const auto& op = binary[std::uniform_int_distribution<size_t>(0, binary.size() - 1)(rng)];
      values.push_back(b.op(op, name, {pick(), pick()}));
    } else {
      const auto& op = unary[std::uniform_int_distribution<size_t>(0, unary.size() - 1)(rng)];
      values.push_back(b.op(op, name, {pick()}));
    }
  }
  b.outputs_for_unread();
  return std::move(b.g);
}

}  // namespace tessera::testing
