// Control flow on ref: `If`, `Loop` and `Scan` as opaque nodes whose sub-graphs the interpreter runs.
//
//   y = If(c, x1..xk) {then_branch, else_branch}
//   ==> body = c ? then_branch : else_branch; bind body.inputs[i] = x(i+1); y = interpret(body)
//
// The importer closes every branch over what it reads from the enclosing graph (attribute.h:
// constants are copied in, other values become the branch's inputs, fed by the node's inputs
// after the condition), so a branch is an ordinary Graph that interpret() runs with the whole
// ref kernel table, nested Ifs included. Both branches give the node's output types (the importer
// checks that), so outputs are copied as they are. Cost: one copy of each captured input and
// output per run; silero VAD's If moves a few kilobytes.
//
//   v_final, scans = Loop(M, cond, v_initial..., captures...) {body}
//   ==> v = v_initial; for (i = 0; i < M && cond; ++i) { cond, v, s = interpret(body, i, cond, v, captures);
//                                                      scans[i] = s }
//
// The importer typed a Loop's scan outputs [M, ...] with M constant (control_flow.h), so a loop
// that stops early (cond_out false before M iterations) while it has scan outputs is a user error
// naming the node; carried values keep one type, so each iteration's values are copied back as
// the next iteration's inputs. A Loop with no M runs until cond_out is false, as in ONNX.
//
//   states, ys = Scan(s_initial..., xs..., captures...) {body}   (opset 9+; scan_closing.cc)
//   ==> s = s_initial; for k in 0..L-1: s, y = interpret(body, s, xs[k along its axis]); ys[k] = y
//
// Only ref runs If, Loop and Scan: no other backend lists them, and the partitioner keeps nodes with
// sub-graphs on ref alone (PartitionRule::run drops other backends' candidates holding one).
#include <cstring>
#include <map>

#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"
#include "tessera/error.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

const KernelRegistry& kernels() {
  static const KernelRegistry r = make_ref_kernels();
  return r;
}

void if_kernel(const Node& n, Inputs in, Outputs out) {
  if (in.empty() || !has_input(in, 0) || in[0].numel() != 1) bad_node(n, "If needs a one-element condition");
  const bool cond = read_scalar(n, in[0]) != 0.0;
  const Graph* body = attr_graph(n.attrs, cond ? "then_branch" : "else_branch");
  // A user error: these inputs choose a branch that cannot run at the shapes the model was bound to.
  if (!body)
    throw UserError("node '" + n.name + "' (If): the condition chose a branch import left out (" +
                    attr_string(n.attrs, cond ? "then_branch" : "else_branch", "?") +
                    "); give inputs that choose the other branch");
  if (body->inputs.size() + 1 != in.size())
    bad_node(n, "the branch has " + std::to_string(body->inputs.size()) + " inputs, the node " + std::to_string(in.size() - 1) +
                    " captured values");
  if (body->outputs.size() != out.size()) bad_node(n, "the branch and the node have different output counts");
  std::map<ValueId, HostTensor> bindings;
  for (size_t i = 0; i < body->inputs.size(); ++i) {
    HostTensor t(in[i + 1].type);
    std::memcpy(t.bytes.data(), in[i + 1].data, t.bytes.size());
    bindings.emplace(body->inputs[i], std::move(t));
  }
  std::vector<HostTensor> values = interpret(*body, kernels(), bindings);
  for (size_t k = 0; k < out.size(); ++k) {
    if (!has_output(out, k)) continue;
    const HostTensor& v = values[static_cast<size_t>(body->outputs[k])];
    if (v.type != out[k].type) bad_node(n, "output " + std::to_string(k) + " is " + to_string(v.type) + ", expected " + to_string(out[k].type));
    std::memcpy(out[k].data, v.bytes.data(), v.bytes.size());
  }
}

// A copy of a kernel input as a HostTensor (a sub-graph binding).
HostTensor copy_of(const ConstTensorView& v) {
  HostTensor t(v.type);
  std::memcpy(t.bytes.data(), v.data, t.bytes.size());
  return t;
}

void loop_kernel(const Node& n, Inputs in, Outputs out) {
  const Graph* body = attr_graph(n.attrs, "body");
  if (!body) bad_node(n, "Loop has no body graph");
  const int64_t captures = attr_int(n.attrs, "captured_inputs", 0);
  if (in.size() < 2 + static_cast<size_t>(captures) || body->inputs.size() != in.size())
    bad_node(n, "the body has " + std::to_string(body->inputs.size()) + " inputs, the node " + std::to_string(in.size()));
  const size_t carried = in.size() - 2 - static_cast<size_t>(captures);
  if (body->outputs.size() < 1 + carried || out.size() > body->outputs.size() - 1)
    bad_node(n, "the body's outputs do not match the node's");
  const size_t scans = body->outputs.size() - 1 - carried;
  const bool bounded = has_input(in, 0);
  const int64_t trips = bounded ? static_cast<int64_t>(read_scalar(n, in[0])) : 0;
  bool cond = !has_input(in, 1) || read_scalar(n, in[1]) != 0.0;

  std::map<ValueId, HostTensor> bindings;
  for (size_t j = 2; j < in.size(); ++j) bindings[body->inputs[j]] = copy_of(in[j]);
  HostTensor iter(body->value(body->inputs[0]).type), cond_in(body->value(body->inputs[1]).type);
  int64_t i = 0;
  for (; (!bounded || i < trips) && cond; ++i) {
    std::memcpy(iter.bytes.data(), &i, sizeof i);
    cond_in.bytes[0] = std::byte{1};
    bindings[body->inputs[0]] = iter;
    bindings[body->inputs[1]] = cond_in;
    std::vector<HostTensor> values = interpret(*body, kernels(), bindings);
    auto result = [&](size_t k) -> const HostTensor& { return values[static_cast<size_t>(body->outputs[k])]; };
    cond = result(0).bytes[0] != std::byte{0};
    for (size_t j = 0; j < carried; ++j) bindings[body->inputs[2 + j]] = result(1 + j);
    for (size_t k = 0; k < scans; ++k) {
      if (!has_output(out, carried + k)) continue;
      const TensorView& o = out[carried + k];
      const HostTensor& s = result(1 + carried + k);
      if (o.type.rank() == 0 || i >= o.type.shape[0] || s.bytes.size() * static_cast<size_t>(o.type.shape[0]) != o.type.bytes())
        bad_node(n, "scan output " + std::to_string(k) + " is " + to_string(o.type) + ", the body gives " + to_string(s.type) +
                        " at iteration " + std::to_string(i));
      std::memcpy(static_cast<std::byte*>(o.data) + static_cast<size_t>(i) * s.bytes.size(), s.bytes.data(), s.bytes.size());
    }
  }
  for (size_t k = 0; k < scans; ++k)
    if (has_output(out, carried + k) && i != out[carried + k].type.shape[0])
      throw UserError("node '" + n.name + "' (Loop): stopped after " + std::to_string(i) + " of " +
                      std::to_string(out[carried + k].type.shape[0]) +
                      " iterations (its condition turned false), but its scan outputs were typed at import for all of "
                      "them; tessera needs a static shape");
  for (size_t j = 0; j < carried; ++j) {
    if (!has_output(out, j)) continue;
    const HostTensor& v = bindings[body->inputs[2 + j]];
    if (v.type != out[j].type) bad_node(n, "output " + std::to_string(j) + " is " + to_string(v.type) + ", expected " + to_string(out[j].type));
    std::memcpy(out[j].data, v.bytes.data(), v.bytes.size());
  }
}

// Row `k` along `axis` of a tensor of `shape` (elements of `size` bytes): the bytes of
// outer = prod(shape[:axis]) blocks of inner = prod(shape[axis+1:]) elements, copied to or from
// a dense slice. to_slice: tensor -> slice; else slice -> tensor.
void copy_row(std::byte* tensor, std::byte* slice, const Shape& shape, int64_t axis, int64_t k, size_t size, bool to_slice) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const size_t block = static_cast<size_t>(inner) * size;
  const int64_t length = shape[static_cast<size_t>(axis)];
  for (int64_t o = 0; o < outer; ++o) {
    std::byte* t = tensor + static_cast<size_t>(o * length + k) * block;
    std::byte* s = slice + static_cast<size_t>(o) * block;
    if (to_slice) std::memcpy(s, t, block);
    else std::memcpy(t, s, block);
  }
}

// Scan (opset 9+): states carried as Loop's are; scan input m is read one row at a time along
// its axis (backwards where its direction is 1), scan output k written one row at a time.
void scan_kernel(const Node& n, Inputs in, Outputs out) {
  const Graph* body = attr_graph(n.attrs, "body");
  if (!body) bad_node(n, "Scan has no body graph");
  const size_t captures = static_cast<size_t>(attr_int(n.attrs, "captured_inputs", 0));
  const size_t scan_inputs = static_cast<size_t>(attr_int(n.attrs, "num_scan_inputs", 0));
  if (in.size() < scan_inputs + captures || body->inputs.size() != in.size() || scan_inputs == 0)
    bad_node(n, "the body has " + std::to_string(body->inputs.size()) + " inputs, the node " + std::to_string(in.size()));
  const size_t states = in.size() - scan_inputs - captures;
  const size_t scans = body->outputs.size() - states;
  const std::vector<int64_t> in_axes = attr_ints(n.attrs, "scan_input_axes", std::vector<int64_t>(scan_inputs, 0));
  const std::vector<int64_t> out_axes = attr_ints(n.attrs, "scan_output_axes", std::vector<int64_t>(scans, 0));
  const std::vector<int64_t> in_dirs = attr_ints(n.attrs, "scan_input_directions", std::vector<int64_t>(scan_inputs, 0));
  const std::vector<int64_t> out_dirs = attr_ints(n.attrs, "scan_output_directions", std::vector<int64_t>(scans, 0));
  if (in_axes.size() != scan_inputs || out_axes.size() != scans || in_dirs.size() != scan_inputs || out_dirs.size() != scans)
    bad_node(n, "scan axes or directions do not match the scan inputs and outputs");
  const int64_t length = in[states].type.shape[static_cast<size_t>(in_axes[0])];

  std::map<ValueId, HostTensor> bindings;
  for (size_t j = 0; j < states; ++j) bindings[body->inputs[j]] = copy_of(in[j]);
  for (size_t j = states + scan_inputs; j < in.size(); ++j) bindings[body->inputs[j]] = copy_of(in[j]);
  for (int64_t k = 0; k < length; ++k) {
    for (size_t m = 0; m < scan_inputs; ++m) {
      const ConstTensorView& x = in[states + m];
      HostTensor row(body->value(body->inputs[states + m]).type);
      const int64_t at = in_dirs[m] ? length - 1 - k : k;
      copy_row(const_cast<std::byte*>(static_cast<const std::byte*>(x.data)), row.bytes.data(), x.type.shape, in_axes[m], at,
               dtype_size(x.type.dtype), true);
      bindings[body->inputs[states + m]] = std::move(row);
    }
    std::vector<HostTensor> values = interpret(*body, kernels(), bindings);
    auto result = [&](size_t j) -> const HostTensor& { return values[static_cast<size_t>(body->outputs[j])]; };
    for (size_t j = 0; j < states; ++j) bindings[body->inputs[j]] = result(j);
    for (size_t s = 0; s < scans; ++s) {
      if (!has_output(out, states + s)) continue;
      const TensorView& o = out[states + s];
      HostTensor row = result(states + s);
      if (row.bytes.size() * static_cast<size_t>(length) != o.type.bytes()) bad_node(n, "scan output " + std::to_string(s) + " has the wrong size");
      copy_row(static_cast<std::byte*>(o.data), row.bytes.data(), o.type.shape, out_axes[s], out_dirs[s] ? length - 1 - k : k,
               dtype_size(o.type.dtype), false);
    }
  }
  for (size_t j = 0; j < states; ++j) {
    if (!has_output(out, j)) continue;
    const HostTensor& v = bindings[body->inputs[j]];
    if (v.type != out[j].type) bad_node(n, "output " + std::to_string(j) + " is " + to_string(v.type) + ", expected " + to_string(out[j].type));
    std::memcpy(out[j].data, v.bytes.data(), v.bytes.size());
  }
}

}  // namespace

void register_control_flow(KernelRegistry& r) {
  r.add("If", if_kernel);
  r.add("Loop", loop_kernel);
  r.add("Scan", scan_kernel);
}

}  // namespace tessera::ref
