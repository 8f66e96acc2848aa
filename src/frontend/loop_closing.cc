// Closing a Loop at import (control_flow.h): its body typed from the node's inputs, its outputs
// typed from the body's, with the trip count for scan outputs.
//
//   ONNX:    v_final[N], scan[K] = Loop(M?, cond?, v_initial[N]) {body}
//   body:    (i: i64, cond_in: bool, v_in[N]) -> (cond_out: bool, v_out[N], s[K])
//   types:   v_in[j] = v_out[j] = v_final[j] = type(v_initial[j]);  scan[k] = [M] + type(s[k])
//
// Loop-carried values may change shape between iterations in ONNX; tessera's values have one
// static type, so a body whose v_out differs from its v_in is refused (naming the node and the
// value). A scan output's leading dimension is the number of iterations: it is static only when
// M is a constant at import, and the loop does not stop before M iterations (the ref kernel
// checks that at run time). Any other Loop with scan outputs is refused here, naming the node and
// what M is; models that compute M from their inputs' shapes get a constant M from constant folding.
#include <cstring>

#include "frontend/control_flow.h"
#include "tessera/error.h"

namespace tessera::detail {
namespace {

// M as a number when it is a constant with data, else nullopt.
std::optional<int64_t> constant_trip_count(const Graph& g, ValueId m) {
  if (m == kNoValue) return std::nullopt;
  const Value& v = g.value(m);
  if (!v.is_constant() || !v.data || v.type.numel() != 1 || v.type.dtype != DType::i64) return std::nullopt;
  int64_t count = 0;
  std::memcpy(&count, v.data->data(), sizeof count);
  return count;
}

bool is_scalar_of(const TensorType& t, DType d) { return t.dtype == d && t.numel() == 1; }

}  // namespace

void close_loop(Graph& g, NodeId id, const RawNode& raw, std::vector<char>& known, const std::string& file) {
  const std::string place = "node '" + raw.name + "' (Loop)";
  const RawGraph* body_raw = raw_subgraph(raw, "body");
  if (!body_raw) throw UserError(file, place, "has no body graph");
  Node& n = g.nodes[static_cast<size_t>(id)];
  // A JSON Loop is closed already: its last `captured_inputs` inputs are captures, in the body too.
  const int64_t json_captures = attr_int(n.attrs, "captured_inputs", 0);
  const size_t formal = raw.formal_inputs;
  if (json_captures < 0 || static_cast<size_t>(json_captures) + 2 > formal ||
      body_raw->inputs.size() != formal)
    throw UserError(file, place,
                    "takes " + std::to_string(formal) + " inputs (trip count, condition, loop-carried values) but its body " +
                        std::to_string(body_raw->inputs.size()) +
                        " (iteration number, condition, loop-carried values); they must agree");
  const size_t carried = formal - 2 - static_cast<size_t>(json_captures);
  const ValueId trip = n.inputs[0], cond = n.inputs[1];
  if (trip != kNoValue && !is_scalar_of(g.value(trip).type, DType::i64))
    throw UserError(file, place, "trip count '" + g.value(trip).name + "' is " + to_string(g.value(trip).type) +
                                     ", expected one i64");
  if (cond != kNoValue && !is_scalar_of(g.value(cond).type, DType::boolean))
    throw UserError(file, place, "condition '" + g.value(cond).name + "' is " + to_string(g.value(cond).type) +
                                     ", expected one bool");
  if (trip == kNoValue && cond == kNoValue)
    throw UserError(file, place, "has neither a trip count nor a condition: it would never end");

  // The body's formal inputs, typed from the node; a type the file declares must agree.
  std::vector<TensorType> types;
  auto declared = [&](size_t i) -> std::optional<TensorType> {
    const auto& [name, type] = body_raw->inputs[i];
    if (body_raw->untyped_inputs.count(name)) return std::nullopt;
    return type;
  };
  types.push_back(declared(0).value_or(TensorType{DType::i64, {}}));
  types.push_back(declared(1).value_or(cond != kNoValue ? g.value(cond).type : TensorType{DType::boolean, {}}));
  if (!is_scalar_of(types[0], DType::i64) || !is_scalar_of(types[1], DType::boolean))
    throw UserError(file, place, "its body's first two inputs must be the iteration number (one i64) and the condition "
                                 "(one bool), not " + to_string(types[0]) + " and " + to_string(types[1]));
  for (size_t i = 2; i < formal; ++i) {
    if (n.inputs[i] == kNoValue) throw UserError(file, place, "loop-carried input " + std::to_string(i - 2) + " is missing");
    const TensorType& t = g.value(n.inputs[i]).type;
    if (auto d = declared(i); d && !(*d == t))
      throw UserError(file, place, "body input '" + body_raw->inputs[i].first + "' is declared " + to_string(*d) +
                                       " but the node gives " + to_string(t));
    types.push_back(t);
  }

  const Captures captures = split_captures(g, n, formal);
  std::shared_ptr<const Graph> body = build_body(*body_raw, types, captures, g.opset, file);

  // Outputs: cond_out, the carried values (types unchanged), then the scan outputs.
  if (body->outputs.size() < 1 + carried)
    throw UserError(file, place, "its body has " + std::to_string(body->outputs.size()) + " outputs, fewer than the condition and " +
                                     std::to_string(carried) + " loop-carried values");
  const size_t scans = body->outputs.size() - 1 - carried;
  if (n.outputs.size() > carried + scans)
    throw UserError(file, place, "has " + std::to_string(n.outputs.size()) + " outputs, its body gives " +
                                     std::to_string(carried) + " loop-carried values and " + std::to_string(scans) +
                                     " scan outputs");
  auto body_out = [&](size_t k) -> const Value& { return body->value(body->outputs[k]); };
  if (!is_scalar_of(body_out(0).type, DType::boolean))
    throw UserError(file, place, "its body's condition output '" + body_out(0).name + "' is " + to_string(body_out(0).type) +
                                     ", expected one bool");
  std::vector<TensorType> out_types;
  for (size_t j = 0; j < carried; ++j) {
    const TensorType& t = body_out(1 + j).type;
    if (!(t == types[2 + j]))
      throw UserError(file, place, "loop-carried value " + std::to_string(j) + " enters the body as " + to_string(types[2 + j]) +
                                       " and leaves it as " + to_string(t) + " ('" + body_out(1 + j).name +
                                       "'); tessera needs one static type across iterations");
    out_types.push_back(t);
  }
  const std::optional<int64_t> trips = constant_trip_count(g, trip);
  for (size_t k = 0; k < scans && carried + k < n.outputs.size(); ++k) {
    if (!trips || *trips < 1) {
      const std::string m = trip == kNoValue ? "it has no trip count"
                            : trips         ? "its trip count is " + std::to_string(*trips)
                                            : "its trip count '" + g.value(trip).name + "' is computed at run time";
      throw UserError::mentioning(file, place, "scan output '" + g.value(n.outputs[carried + k]).name +
                                                   "' stacks one value per iteration, and " + m +
                                                   "; tessera needs a constant trip count of at least 1 for scan outputs (bind the "
                                                   "inputs it depends on with " + mention("input_shapes") +
                                                   ", or give it as an initializer)");
    }
    TensorType t = body_out(1 + carried + k).type;
    t.shape.insert(t.shape.begin(), *trips);
    out_types.push_back(t);
  }
  type_outputs(g, n, out_types, known, file, place);
  n.inputs.resize(formal);
  n.inputs.insert(n.inputs.end(), captures.values.begin(), captures.values.end());
  n.attrs["body"] = GraphAttr{body};
  const int64_t total = json_captures + static_cast<int64_t>(captures.values.size());
  if (total > 0) n.attrs["captured_inputs"] = total;
  else n.attrs.erase("captured_inputs");
}

}  // namespace tessera::detail
