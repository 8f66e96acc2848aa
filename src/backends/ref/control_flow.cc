// Control flow on ref: `If` as an opaque node whose chosen branch the interpreter runs.
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
// Only ref runs If: no other backend lists it, and the partitioner keeps nodes with sub-graphs on
// ref alone (PartitionRule::run drops other backends' candidates holding one). Loop is not supported.
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
                    "); give inputs that choose the other branch (--input NAME=FILE.npy)");
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

}  // namespace

void register_control_flow(KernelRegistry& r) { r.add("If", if_kernel); }

}  // namespace tessera::ref
