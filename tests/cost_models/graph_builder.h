// Hand-built functions for cost model tests: a few lines per graph, f32 unless told otherwise.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/structural_hash.h"

namespace tessera::test {

struct GraphBuilder {
  Graph g;

  ValueId input(const std::string& name, Shape shape) {
    ValueId v = g.add_value(Value{name, TensorType{DType::f32, std::move(shape)}, ValueKind::Input});
    g.inputs.push_back(v);
    return v;
  }
  ValueId constant(const std::string& name, Shape shape) {
    return g.add_value(Value{name, TensorType{DType::f32, std::move(shape)}, ValueKind::Constant});
  }
  ValueId op(const std::string& op, const std::string& name, std::vector<ValueId> inputs, Shape out,
             Attributes attrs = {}) {
    ValueId y = g.add_value(Value{name + "_y", TensorType{DType::f32, std::move(out)}});
    Node n;
    n.name = name;
    n.op = op;
    n.attrs = std::move(attrs);
    n.inputs = std::move(inputs);
    n.outputs = {y};
    g.add_node(std::move(n));
    return y;
  }
  void output(ValueId v) { g.outputs.push_back(v); }
};

// A chain x -> ops[0] -> ops[1] -> ... on 10x10 tensors; the last value is the output.
inline Graph chain(const std::vector<std::string>& ops) {
  GraphBuilder b;
  ValueId v = b.input("x", {10, 10});
  for (size_t i = 0; i < ops.size(); ++i) v = b.op(ops[i], ops[i] + std::to_string(i), {v}, {10, 10});
  b.output(v);
  return b.g;
}

}  // namespace tessera::test
