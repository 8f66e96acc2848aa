// Extraction of a SubGraph as a standalone function Graph (see sub_graph.h).
#include <unordered_map>

#include "tessera/error.h"
#include "partition/sub_graph.h"

namespace tessera {
namespace {

// A value read inside S that becomes a function input: produced outside S and not a constant,
// or a weight constant (a parameter).
bool is_argument(const Value& value, const IndexSet& inside) {
  if (value.is_constant()) return value.is_weight();
  return value.producer == kNoNode || !inside.contains(value.producer);
}

}  // namespace

std::vector<ValueId> function_arguments(const Graph& graph, const SubGraph& sub_graph) {
  std::vector<ValueId> args;
  std::vector<bool> seen(graph.values.size(), false);
  sub_graph.inside().for_each([&](NodeId i) {
    for (ValueId v : graph.node(i).inputs) {
      if (v == kNoValue || seen[static_cast<size_t>(v)]) continue;
      if (!is_argument(graph.value(v), sub_graph.inside())) continue;
      seen[static_cast<size_t>(v)] = true;
      args.push_back(v);
    }
  });
  return args;
}

Graph extract_function(const Graph& graph, const SubGraph& sub_graph) {
  const IndexSet& inside = sub_graph.inside();
  Graph fn;
  fn.name = sub_graph.label();
  fn.source = graph.source;
  fn.opset = graph.opset;
  std::unordered_map<ValueId, ValueId> remap;   // outer value -> function value

  for (ValueId v : function_arguments(graph, sub_graph)) {
    Value arg = graph.value(v);
    arg.kind = ValueKind::Input;
    arg.producer = kNoNode;
    arg.producer_output = 0;
    arg.data = nullptr;
    ValueId id = fn.add_value(std::move(arg));
    fn.inputs.push_back(id);
    remap[v] = id;
  }
  inside.for_each([&](NodeId i) {
    const Node& outer = graph.node(i);
    Node node = outer;
    for (ValueId& v : node.inputs) {
      if (v == kNoValue) continue;
      auto it = remap.find(v);
      if (it == remap.end()) {
        const Value& value = graph.value(v);
        TESSERA_CHECK(value.is_constant(), "extract_function: inner value read before it is produced");
        it = remap.emplace(v, fn.add_value(value)).first;   // a small constant, copied in
      }
      v = it->second;
    }
    for (ValueId& v : node.outputs) {
      Value out = graph.value(v);
      out.producer = kNoNode;   // add_node sets it
      ValueId id = fn.add_value(std::move(out));
      remap[v] = id;
      v = id;
    }
    fn.add_node(std::move(node));
  });
  for (ValueId v : sub_graph.outputs()) fn.outputs.push_back(remap.at(v));
  return fn;
}

}  // namespace tessera
