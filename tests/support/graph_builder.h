// Hand-built graphs for tests: a few lines per graph, f32[10,10] unless told otherwise.
//
//   GraphBuilder b;
//   ValueId x = b.input("x");
//   ValueId r = b.op("Relu", "r0", {x});               // node "r0", its output value "r0"
//   ValueId y = b.node("Add", {r, b.scalar("one", 1.0f)}, {10, 10});   // auto-named "Add_1"
//   b.output(y);
//
// Constants are shape-only unless given data (constant<T> with values, scalar with a value).
// Every test folder uses this one builder; the graphs are what an importer or extract_function
// would produce, so code under test sees nothing test-specific.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera::testing {

inline TensorType f32_10x10() { return TensorType{DType::f32, {10, 10}}; }

class GraphBuilder {
 public:
  ValueId input(const std::string& name, Shape shape = {10, 10}, DType dtype = DType::f32) {
    ValueId id = g.add_value(Value{name, TensorType{dtype, std::move(shape)}, ValueKind::Input});
    g.inputs.push_back(id);
    return id;
  }
  // A shape-only constant: a weight when float with more than one element (Value::is_weight).
  ValueId constant(const std::string& name, Shape shape = {10, 10}, DType dtype = DType::f32) {
    return g.add_value(Value{name, TensorType{dtype, std::move(shape)}, ValueKind::Constant});
  }
  ValueId weight(const std::string& name, Shape shape = {10, 10}) { return constant(name, std::move(shape)); }
  // A constant with data.
  template <typename T>
  ValueId constant(const std::string& name, DType dtype, Shape shape, const std::vector<T>& values) {
    auto bytes = std::make_shared<TensorBytes>(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes->data(), values.data(), bytes->size());   // memcpy(null, ...) is UB
    Value v{name, TensorType{dtype, std::move(shape)}, ValueKind::Constant};
    v.data = std::move(bytes);
    return g.add_value(std::move(v));
  }
  // An f32 scalar constant: shape-only, or with the value given.
  ValueId scalar(const std::string& name) { return constant(name, {}); }
  ValueId scalar(const std::string& name, float value) { return constant<float>(name, DType::f32, {}, {value}); }

  // Node `name` = op(inputs...) with one f32 output of shape `out`, named like the node.
  ValueId op(const std::string& op, const std::string& name, std::vector<ValueId> inputs, Shape out = {10, 10},
             Attributes attrs = {}) {
    ValueId id = g.add_value(Value{name, TensorType{DType::f32, std::move(out)}, ValueKind::Intermediate});
    Node n;
    n.name = name;
    n.op = op;
    n.attrs = std::move(attrs);
    n.inputs = std::move(inputs);
    n.outputs = {id};
    g.add_node(std::move(n));
    return id;
  }
  // The same, named "<op>_<node index>" as the importer names unnamed nodes.
  ValueId node(const std::string& op, std::vector<ValueId> inputs, Shape out, Attributes attrs = {}) {
    return this->op(op, op + "_" + std::to_string(g.nodes.size()), std::move(inputs), std::move(out), std::move(attrs));
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

}  // namespace tessera::testing
