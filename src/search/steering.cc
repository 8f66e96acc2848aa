// Steering (src/search/steering.h): selectors, resolution, the candidate filter.
#include "search/steering.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>

#include "backends/spec/backend_spec_detail.h"
#include "tessera/error.h"

namespace tessera {
namespace {

bool is_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::vector<NodeId> select_nodes(const Graph& graph, const std::string& selector) {
  std::vector<NodeId> out;
  const std::string op_prefix = "op:";
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    bool hit;
    if (selector.rfind(op_prefix, 0) == 0) hit = node.op == selector.substr(op_prefix.size());
    else if (is_glob(selector)) hit = ::fnmatch(selector.c_str(), node.name.c_str(), 0) == 0;
    else hit = node.name == selector;
    if (hit) out.push_back(n);
  }
  return out;
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

SteeringRule parse_steering_rule(SteeringRule::Kind kind, const std::string& text) {
  SteeringRule rule;
  rule.kind = kind;
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UserError(rule.kind_name(), text, "expected SELECTOR=BACKEND (a node name, op:TYPE or a glob such as /layer1/*)");
  rule.selector = text.substr(0, eq);
  rule.backend = text.substr(eq + 1);
  if (rule.selector == "op:") throw UserError(rule.kind_name(), text, "op: needs an op type, e.g. op:Conv");
  return rule;
}

std::optional<std::string> spec_refuses(const BackendSpec& spec, const Graph& graph, NodeId n) {
  const Node& node = graph.node(n);
  if (!spec.supports(node.op))
    return "op " + node.op + " is not in " + spec.name + "'s spec (neither its ops nor its patterns name it)";
  if (!spec.detail().dtypes.all)
    if (std::optional<std::string> why = spec.detail().dtypes.refuses(graph, node))
      return spec.name + " does not take it: " + *why;
  return std::nullopt;
}

Steering Steering::resolve(const Graph& graph, const std::vector<BackendSpec>& backends,
                           const std::vector<SteeringRule>& rules, const std::string& model_path) {
  Steering s;
  s.pin_of_.assign(size_t(graph.num_nodes()), -1);
  s.forbids_of_.assign(size_t(graph.num_nodes()), {});
  std::vector<std::string> names;
  for (const BackendSpec& b : backends) names.push_back(b.name);
  for (size_t r = 0; r < rules.size(); ++r) {
    const SteeringRule& rule = rules[r];
    const std::string place = rule.kind_name() + " " + rule.text();
    const auto spec = std::find_if(backends.begin(), backends.end(), [&](const BackendSpec& b) { return b.name == rule.backend; });
    if (spec == backends.end())
      throw UserError(model_path, place, "backend '" + rule.backend + "' is not among the backends (" + join(names) + ")");
    std::vector<NodeId> nodes = select_nodes(graph, rule.selector);
    if (nodes.empty())
      throw UserError(model_path, place,
                      "the selector matches no node (give a node name, op:TYPE or a glob over node names such as '" +
                          (graph.num_nodes() ? graph.node(0).name : std::string("/layer1/*")) + "'; `tessera print` lists them)");
    for (NodeId n : nodes) {
      const std::string& name = graph.node(n).name;
      if (rule.kind == SteeringRule::Kind::pin) {
        if (std::optional<std::string> why = spec_refuses(*spec, graph, n))
          throw UserError(model_path, place, "cannot pin node '" + name + "' to " + rule.backend + ": " + *why);
        if (const int other = s.pin_of_[size_t(n)]; other >= 0 && rules[size_t(other)].backend != rule.backend)
          throw UserError(model_path, place, "node '" + name + "' is also pinned to " + rules[size_t(other)].backend +
                                                 " by pin " + rules[size_t(other)].text());
        s.pin_of_[size_t(n)] = int(r);
      } else {
        s.forbids_of_[size_t(n)].push_back(int(r));
      }
    }
    s.rules_.push_back(rule);
    s.matched_.push_back(std::move(nodes));
  }
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const int pin = s.pin_of_[size_t(n)];
    if (pin < 0) continue;
    for (int f : s.forbids_of_[size_t(n)])
      if (rules[size_t(f)].backend == rules[size_t(pin)].backend)
        throw UserError(model_path, "pin " + rules[size_t(pin)].text(),
                        "node '" + graph.node(n).name + "' is pinned to " + rules[size_t(pin)].backend +
                            " and forbidden on it by forbid " + rules[size_t(f)].text());
  }
  if (s.rules_.empty()) return Steering{};
  return s;
}

std::optional<std::string> Steering::refusal(NodeId n, const std::string& backend) const {
  if (rules_.empty()) return std::nullopt;
  if (const int pin = pin_of_[size_t(n)]; pin >= 0 && rules_[size_t(pin)].backend != backend)
    return "pinned to " + rules_[size_t(pin)].backend + " by pin " + rules_[size_t(pin)].text();
  for (int f : forbids_of_[size_t(n)])
    if (rules_[size_t(f)].backend == backend) return "forbidden by forbid " + rules_[size_t(f)].text();
  return std::nullopt;
}

std::optional<std::string> Steering::pinned(NodeId n) const {
  if (rules_.empty() || pin_of_[size_t(n)] < 0) return std::nullopt;
  return rules_[size_t(pin_of_[size_t(n)])].backend;
}

bool Steering::allows(NodeId n, const std::string& backend) const { return !refusal(n, backend); }

bool Steering::allows(const Candidate& c) const {
  if (rules_.empty()) return true;
  bool ok = true;
  c.inside().for_each([&](int n) { ok = ok && allows(NodeId(n), c.backend); });
  return ok;
}

std::vector<Candidate> steer_candidates(std::vector<Candidate> candidates, const Steering& steering, const Graph& graph,
                                        const std::string& model_path) {
  if (steering.empty()) return candidates;
  const int n = graph.num_nodes();
  std::vector<char> had(size_t(n), 0), has(size_t(n), 0), pinned_has(size_t(n), 0);
  std::vector<Candidate> kept;
  for (Candidate& c : candidates) {
    c.inside().for_each([&](int v) { had[size_t(v)] = 1; });
    if (!steering.allows(c)) continue;
    c.inside().for_each([&](int v) {
      has[size_t(v)] = 1;
      if (steering.pinned(NodeId(v)) == c.backend) pinned_has[size_t(v)] = 1;
    });
    kept.push_back(std::move(c));
  }
  for (NodeId v = 0; v < n; ++v) {
    const std::string& name = graph.node(v).name;
    if (const auto pin = steering.pinned(v); pin && !pinned_has[size_t(v)])
      throw UserError(model_path, "node '" + name + "'",
                      "pinned to " + *pin + ", which proposes no candidate holding it (op " + graph.node(v).op +
                          ": only inside patterns that do not match here, or every candidate broke the backend's limits)");
    if (had[size_t(v)] && !has[size_t(v)])
      throw UserError(model_path, "node '" + name + "'",
                      "pin/forbid leave no backend that can take it (op " + graph.node(v).op + ")");
  }
  return kept;
}

}  // namespace tessera
