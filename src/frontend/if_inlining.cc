#include "frontend/if_inlining.h"

#include "tessera/error.h"

namespace tessera::detail {

RawGraph inline_if(const RawGraph& raw, const std::string& if_output, bool cond, const std::string& file) {
  RawGraph out = raw;
  out.nodes.clear();
  bool found = false;
  for (const RawNode& n : raw.nodes) {
    if (found || n.op != "If" || !n.domain.empty() || n.outputs.empty() || n.outputs[0] != if_output) {
      out.nodes.push_back(n);
      continue;
    }
    found = true;
    const std::string branch_name = cond ? "then_branch" : "else_branch";
    const RawGraph* branch = nullptr;
    for (const auto& [name, g] : n.subgraphs)
      if (name == branch_name) branch = g.get();
    const std::string place = "node '" + n.name + "' (If)";
    if (!branch) throw UserError(file, place, "has no " + branch_name + " graph");
    if (branch->outputs.size() != n.outputs.size())
      throw UserError(file, place, branch_name + " has " + std::to_string(branch->outputs.size()) + " outputs, the node " +
                                       std::to_string(n.outputs.size()));
    for (const auto& c : branch->constants) out.constants.push_back(c);
    for (const RawNode& b : branch->nodes) out.nodes.push_back(b);
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      RawNode id;
      id.name = n.name + "/" + branch_name + "/output_" + std::to_string(k);
      id.op = "Identity";
      id.inputs = {branch->outputs[k]};
      id.outputs = {n.outputs[k]};
      id.place = n.place;
      out.nodes.push_back(std::move(id));
    }
  }
  return out;
}

}  // namespace tessera::detail
