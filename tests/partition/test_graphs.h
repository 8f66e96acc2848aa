// Small graphs built directly with Graph::add_value/add_node, for partition tests.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera::testing {

inline TensorType f32_10x10() { return TensorType{DType::f32, {10, 10}}; }

class GraphBuilder {
 public:
  ValueId input(const std::string& name) {
    Value v{name, f32_10x10(), ValueKind::Input};
    ValueId id = g.add_value(v);
    g.inputs.push_back(id);
    return id;
  }
  // A weight (float, 100 elements) or a small constant (scalar) for extraction tests.
  ValueId weight(const std::string& name) {
    Value v{name, f32_10x10(), ValueKind::Constant};
    return g.add_value(v);
  }
  ValueId scalar(const std::string& name) {
    Value v{name, TensorType{DType::f32, {}}, ValueKind::Constant};
    return g.add_value(v);
  }
  // Adds node `name` = op(inputs...) with one output value named like the node.
  ValueId op(const std::string& op, const std::string& name, std::vector<ValueId> inputs) {
    Value out{name, f32_10x10(), ValueKind::Intermediate};
    ValueId id = g.add_value(out);
    Node n;
    n.name = name;
    n.op = op;
    n.inputs = std::move(inputs);
    n.outputs = {id};
    g.add_node(std::move(n));
    return id;
  }
  void output(ValueId v) { g.outputs.push_back(v); }
  // Marks every value nobody reads as a graph output.
  void outputs_for_unread() {
    auto consumers = g.consumers();
    for (const Node& n : g.nodes)
      for (ValueId v : n.outputs)
        if (consumers[static_cast<size_t>(v)].empty()) g.outputs.push_back(v);
  }

  Graph g;
};

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
