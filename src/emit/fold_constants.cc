// Folding transposed weights into new constants (see fold_constants.h).
#include "emit/fold_constants.h"

#include <algorithm>
#include <map>
#include <set>

#include "emit/graph_edit.h"

namespace tessera {
namespace {

bool is_transpose(const Node& n) { return n.op == "Transpose" && n.domain.empty() && n.inputs.size() == 1; }

std::vector<int64_t> perm_of(const Node& t, int rank) {
  std::vector<int64_t> perm = attr_ints(t.attrs, "perm");
  if (perm.empty())
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);   // ONNX default: reverse
  return perm;
}

void drop_nodes(Graph& g, const std::set<NodeId>& dead) {
  std::vector<Node> kept;
  for (NodeId n = 0; n < g.num_nodes(); ++n)
    if (!dead.count(n)) kept.push_back(std::move(g.nodes[static_cast<size_t>(n)]));
  g.nodes = std::move(kept);
  g = emit_detail::compact(g);
}

class Folder {
 public:
  Folder(const Module& in) : out_(in) {}

  void fold_function(const std::string& symbol) {
    Function& fn = out_.functions.at(symbol);
    Graph& body = fn.body;
    std::set<NodeId> dead;
    // Inside: Transpose(constant) -> constant.
    for (NodeId i = 0; i < body.num_nodes(); ++i) {
      const Node& n = body.node(i);
      if (!is_transpose(n) || !body.value(n.inputs[0]).is_constant()) continue;
      const Value c = body.value(n.inputs[0]);
      Value& y = body.value(n.outputs[0]);
      y.kind = ValueKind::Constant;
      y.producer = kNoNode;
      y.data = emit_detail::transpose_data(c.data, c.type, perm_of(n, c.type.rank()));
      dead.insert(i);
    }
    // Across the boundary: a parameter read by one Transpose only, a constant at every call site.
    std::vector<Node*> calls;
    for (Node& n : out_.main.nodes)
      if (n.op == symbol && out_.callee(n)) calls.push_back(&n);
    auto consumers = body.consumers();
    for (size_t i = 0; i < body.inputs.size(); ++i) {
      ValueId p = body.inputs[i];
      const auto& users = consumers[static_cast<size_t>(p)];
      if (users.size() != 1 || dead.count(users[0]) || !is_transpose(body.node(users[0])) || body.is_output(p)) continue;
      if (calls.empty() || !std::all_of(calls.begin(), calls.end(), [&](Node* c) {
            return out_.main.value(c->inputs[i]).is_constant();
          }))
        continue;
      const NodeId t = users[0];
      const ValueId ty = body.node(t).outputs[0];
      const std::vector<int64_t> perm = perm_of(body.node(t), body.value(p).type.rank());
      const std::string& param = body.value(p).name;
      const std::string& tname = body.value(ty).name;
      std::string suffix = tname.rfind(param + "_", 0) == 0 ? tname.substr(param.size() + 1) : "t";
      for (Node* c : calls) c->inputs[i] = folded(c->inputs[i], perm, suffix);
      Value& pv = body.value(p);
      pv.type.shape = emit_detail::transpose_shape(pv.type.shape, perm);
      pv.name = tname;
      for (Node& n : body.nodes)
        std::replace(n.inputs.begin(), n.inputs.end(), ty, p);
      std::replace(body.outputs.begin(), body.outputs.end(), ty, p);
      dead.insert(t);
      main_changed_ = true;
    }
    if (dead.empty()) return;
    drop_nodes(body, dead);
    fn.lowered.reset();
  }

  Module finish() {
    if (main_changed_) {
      out_.main = emit_detail::compact(out_.main);
      out_.main_lowered.reset();
    }
    return std::move(out_);
  }

 private:
  // The transposed copy of main's constant `v`, made once per (constant, suffix).
  ValueId folded(ValueId v, const std::vector<int64_t>& perm, const std::string& suffix) {
    auto key = std::make_pair(v, suffix);
    if (auto it = made_.find(key); it != made_.end()) return it->second;
    const Value c = out_.main.value(v);
    Value t{c.name + "_" + suffix, TensorType{c.type.dtype, emit_detail::transpose_shape(c.type.shape, perm)},
            ValueKind::Constant};
    t.data = emit_detail::transpose_data(c.data, c.type, perm);
    return made_[key] = out_.main.add_value(std::move(t));
  }

  Module out_;
  std::map<std::pair<ValueId, std::string>, ValueId> made_;
  bool main_changed_ = false;
};

}  // namespace

Module fold_constants(const Module& module, const std::string& backend) {
  Folder folder(module);
  for (const std::string& symbol : module.functions_of(backend)) folder.fold_function(symbol);
  return folder.finish();
}

}  // namespace tessera
