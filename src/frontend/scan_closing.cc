// Closing a Scan at import (control_flow.h): its body typed from slices of the scan inputs.
//
//   ONNX (opset 9+): states[N], scans[K] = Scan(s_initial[N], xs[M]) {body} {num_scan_inputs = M}
//   body:    (s_in[N], x[M]) -> (s_out[N], y[K])
//   types:   x[m] = xs[m] without its scan axis; s_out[j] = s_in[j] = type(s_initial[j]);
//            scans[k] = y[k] with the sequence length L inserted at its scan output axis
//
// Unlike Loop, the number of iterations is static: it is the length L of the scan inputs along
// their axes (all equal, at least 1), so every output type is known at import. Attributes
// scan_input_axes / scan_output_axes (negative counted from the end) and the directions are kept
// on the node for the ref kernel. Scan-8 (a batch axis and sequence_lens) is refused, naming the
// node; so is a state whose type changes in one iteration.
#include "frontend/control_flow.h"
#include "tessera/error.h"

namespace tessera::detail {

void close_scan(Graph& g, NodeId id, const RawNode& raw, std::vector<char>& known, const std::string& file) {
  const std::string place = "node '" + raw.name + "' (Scan)";
  if (g.opset < 9) throw UserError(file, place, "Scan before opset 9 (batched, with sequence_lens) is not supported; opset 9+ Scan is");
  const RawGraph* body_raw = raw_subgraph(raw, "body");
  if (!body_raw) throw UserError(file, place, "has no body graph");
  Node& n = g.nodes[static_cast<size_t>(id)];
  const int64_t json_captures = attr_int(n.attrs, "captured_inputs", 0);
  const int64_t scan_inputs = attr_int(n.attrs, "num_scan_inputs", -1);
  const size_t formal = raw.formal_inputs;
  if (scan_inputs < 1 || json_captures < 0 || static_cast<size_t>(scan_inputs + json_captures) > formal)
    throw UserError(file, place, "num_scan_inputs is " + std::to_string(scan_inputs) + " but the node has " +
                                     std::to_string(formal) + " inputs; it needs at least one scan input");
  if (body_raw->inputs.size() != formal)
    throw UserError(file, place, "takes " + std::to_string(formal) + " inputs (states, scan inputs) but its body " +
                                     std::to_string(body_raw->inputs.size()) + "; they must agree");
  const size_t m_count = static_cast<size_t>(scan_inputs);
  const size_t states = formal - m_count - static_cast<size_t>(json_captures);
  std::vector<TensorType> types;
  for (size_t i = 0; i < formal; ++i) {
    if (n.inputs[i] == kNoValue) throw UserError(file, place, "input " + std::to_string(i) + " is missing");
    types.push_back(g.value(n.inputs[i]).type);
  }

  // Each scan input loses its axis in the body; all share one length.
  std::vector<int64_t> in_axes = attr_ints(n.attrs, "scan_input_axes", std::vector<int64_t>(m_count, 0));
  if (in_axes.size() != m_count) throw UserError(file, place, "scan_input_axes has " + std::to_string(in_axes.size()) +
                                                                  " entries for " + std::to_string(m_count) + " scan inputs");
  int64_t length = -1;
  for (size_t m = 0; m < m_count; ++m) {
    TensorType& t = types[states + m];
    const int64_t rank = t.rank();
    int64_t axis = in_axes[m] < 0 ? in_axes[m] + rank : in_axes[m];
    if (axis < 0 || axis >= rank)
      throw UserError(file, place, "scan input " + std::to_string(m) + " is " + to_string(t) + ", no axis " + std::to_string(in_axes[m]));
    if (length >= 0 && t.shape[static_cast<size_t>(axis)] != length)
      throw UserError(file, place, "scan inputs have different lengths (" + std::to_string(length) + " and " +
                                       std::to_string(t.shape[static_cast<size_t>(axis)]) + ")");
    length = t.shape[static_cast<size_t>(axis)];
    t.shape.erase(t.shape.begin() + axis);
    in_axes[m] = axis;
  }
  if (length < 1) throw UserError(file, place, "its scan inputs are empty; tessera needs at least one iteration");
  for (size_t i = 0; i < formal; ++i) {
    const auto& [name, declared] = body_raw->inputs[i];
    if (!body_raw->untyped_inputs.count(name) && !(declared == types[i]))
      throw UserError(file, place, "body input '" + name + "' is declared " + to_string(declared) + " but the node gives " +
                                       to_string(types[i]));
  }

  const Captures captures = split_captures(g, n, formal);
  std::shared_ptr<const Graph> body = build_body(*body_raw, types, captures, g.opset, file);
  if (body->outputs.size() < states)
    throw UserError(file, place, "its body has " + std::to_string(body->outputs.size()) + " outputs, fewer than its " +
                                     std::to_string(states) + " states");
  const size_t scans = body->outputs.size() - states;
  if (n.outputs.size() > body->outputs.size())
    throw UserError(file, place, "has " + std::to_string(n.outputs.size()) + " outputs, its body gives " +
                                     std::to_string(body->outputs.size()));
  std::vector<int64_t> out_axes = attr_ints(n.attrs, "scan_output_axes", std::vector<int64_t>(scans, 0));
  if (out_axes.size() != scans) throw UserError(file, place, "scan_output_axes has " + std::to_string(out_axes.size()) +
                                                                 " entries for " + std::to_string(scans) + " scan outputs");
  std::vector<TensorType> out_types;
  for (size_t j = 0; j < body->outputs.size(); ++j) {
    TensorType t = body->value(body->outputs[j]).type;
    if (j < states) {
      if (!(t == types[j]))
        throw UserError(file, place, "state " + std::to_string(j) + " enters the body as " + to_string(types[j]) + " and leaves it as " +
                                         to_string(t) + "; tessera needs one static type across iterations");
    } else {
      const int64_t rank = t.rank() + 1;
      int64_t& axis = out_axes[j - states];
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank)
        throw UserError(file, place, "scan output " + std::to_string(j - states) + " has no axis " + std::to_string(axis));
      t.shape.insert(t.shape.begin() + axis, length);
    }
    out_types.push_back(t);
  }
  type_outputs(g, n, out_types, known, file, place);
  n.inputs.resize(formal);
  n.inputs.insert(n.inputs.end(), captures.values.begin(), captures.values.end());
  n.attrs["body"] = GraphAttr{body};
  auto check_directions = [&](const std::string& name, size_t want) {
    const std::vector<int64_t> d = attr_ints(n.attrs, name, {});
    bool ok = d.empty() || d.size() == want;
    for (int64_t v : d) ok &= v == 0 || v == 1;
    if (!ok) throw UserError(file, place, name + " must hold " + std::to_string(want) + " values, each 0 or 1");
  };
  check_directions("scan_input_directions", m_count);
  check_directions("scan_output_directions", scans);
  // Normalized (non-negative) axes, for the kernel.
  n.attrs["scan_input_axes"] = in_axes;
  if (scans > 0) n.attrs["scan_output_axes"] = out_axes;
  const int64_t total = json_captures + static_cast<int64_t>(captures.values.size());
  if (total > 0) n.attrs["captured_inputs"] = total;
  else n.attrs.erase("captured_inputs");
}

}  // namespace tessera::detail
