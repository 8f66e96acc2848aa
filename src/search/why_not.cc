// --why NODE[=BACKEND]. See why_not.h.
#include "search/why_not.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "backends/spec/backend_spec_detail.h"
#include "search/bounded_search.h"
#include "search/cost_display.h"
#include "search/explain.h"
#include "tessera/error.h"

namespace tessera {
namespace {

// Why `spec` proposed no candidate holding node n although its spec takes the node.
std::string rule_refusal(const BackendSpec& spec, const Graph& graph, NodeId n) {
  const std::string& op = graph.node(n).op;
  if (!spec.all_ops && !std::binary_search(spec.ops.begin(), spec.ops.end(), op)) {
    std::string names;
    for (const CompositeSpec& p : spec.detail().patterns)
      for (const std::string& name : p.pattern->op_names())
        if (name == op) {
          names += (names.empty() ? "" : ", ") + p.name;
          break;
        }
    return "op " + op + " is only inside " + spec.name + "'s patterns (" + names + "), none of which matches here";
  }
  return "every candidate holding it broke " + spec.name + "'s limits (max_depth, max_exits, allow_taps; the partitioner's "
         "explanation counts the rejections)";
}

}  // namespace

WhyQuery parse_why(const std::string& text, const Graph& graph, const std::vector<BackendSpec>& backends) {
  WhyQuery q;
  std::string node = text;
  if (const size_t eq = text.rfind('='); eq != std::string::npos) {
    const std::string b = text.substr(eq + 1);
    if (std::any_of(backends.begin(), backends.end(), [&](const BackendSpec& s) { return s.name == b; })) {
      node = text.substr(0, eq);
      q.backend = b;
    } else if (graph.find_node(text) == kNoNode) {
      throw UserError::option("why", text, "backend '" + b + "' is not among the backends");
    }
  }
  q.node = graph.find_node(node);
  if (q.node == kNoNode)
    throw UserError::option("why", text, "no node named '" + node + "' in the model (`tessera print` lists the names)");
  return q;
}

std::string explain_why(const PartitionOutcome& outcome, const Graph& graph, const std::vector<BackendSpec>& backends,
                        const Steering& steering, const WhyQuery& query, const WhyOptions& options) {
  const SearchProblem& problem = outcome.problem;
  const Plan& plan = outcome.plan;
  const NodeId n = query.node;
  auto cost = [&](const Cost& c) { return display_cost(c, plan.cost_model); };
  std::ostringstream o;
  o << "node '" << graph.node(n).name << "' (" << graph.node(n).op << ")";
  for (size_t p = 0; p < plan.partitions.size(); ++p)
    if (plan.partitions[p].nodes.contains(n)) o << " runs on " << plan.partitions[p].backend << ", partition " << p;
  o << "\n";
  std::string search_backend;   // where the search's own plan put it (the race may have moved it)
  int search_candidate = -1;
  for (int c : outcome.search.chosen)
    if (problem.candidates[size_t(c)].inside().contains(n)) {
      search_backend = problem.candidates[size_t(c)].backend;
      search_candidate = c;
    }
  auto describe = [&](int c) {
    const Candidate& k = problem.candidates[size_t(c)];
    return k.rule + " " + nodes_label(k.inside(), graph) + " " + k.inside().to_string() + " " + cost(problem.costs[size_t(c)]);
  };
  if (!plan.verified_choice.empty() && plan.verified_choice != plan.search)
    o << "  (the end-to-end race chose " << plan.verified_choice << "; the search's plan, which the costs below are "
      << "compared with, put it on " << search_backend << ")\n";
  const bool re_search = problem.num_nodes() <= options.max_nodes && outcome.search.found;
  for (const BackendSpec& spec : backends) {
    if (query.backend && spec.name != *query.backend) continue;
    char head[64];
    std::snprintf(head, sizeof head, "  %-10s ", spec.name.c_str());
    o << head;
    if (std::optional<std::string> why = steering.refusal(n, spec.name)) {
      o << "no candidate: " << *why << "\n";
      continue;
    }
    if (std::optional<std::string> why = spec_refuses(spec, graph, n)) {
      o << "no candidate: " << *why << "\n";
      continue;
    }
    int best = -1, any = -1;
    for (size_t c = 0; c < problem.candidates.size(); ++c) {
      const Candidate& cand = problem.candidates[c];
      if (cand.backend != spec.name || !cand.inside().contains(n)) continue;
      if (any < 0) any = int(c);
      if (problem.usable(int(c)) && (best < 0 || problem.costs[c] < problem.costs[size_t(best)])) best = int(c);
    }
    if (any < 0) {
      o << "no candidate: " << rule_refusal(spec, graph, n) << "\n";
      continue;
    }
    if (best < 0) {
      o << "no price: " << problem.costs[size_t(any)].to_string() << "\n";
      continue;
    }
    if (spec.name == search_backend) {
      o << "chosen: the search took " << describe(search_candidate) << "\n";
      continue;
    }
    o << "best candidate " << describe(best);
    if (!re_search) {
      o << "; no re-search (over " << options.max_nodes << " nodes)\n";
      continue;
    }
    CollageOptions co;
    co.memory_budget = options.search_memory ? options.search_memory : default_search_memory();
    co.allowed.assign(problem.candidates.size(), 1);
    for (size_t c = 0; c < problem.candidates.size(); ++c)
      if (problem.candidates[c].inside().contains(n) && problem.candidates[c].backend != spec.name) co.allowed[c] = 0;
    SearchResult r;
    try {
      r = bounded_collage_search(problem, co, {});
    } catch (const UserError&) {
      r.found = false;
    }
    if (!r.found) {
      o << "; no acyclic plan puts it there\n";
      continue;
    }
    const Cost& chosen = outcome.search.total;
    o << "; cheapest plan with it: " << cost(r.total);
    if (r.total.is_value() && chosen.is_value()) {
      const double d = r.total.number() - chosen.number();
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.1f%%", chosen.number() > 0 ? 100.0 * d / chosen.number() : 0.0);
      o << ", " << (r.bound.proven ? "" : "at most ") << (d >= 0 ? "+" : "-") << cost(Cost::value(std::abs(d))) << " ("
        << pct << ") over the search's plan (" << cost(chosen) << ", crossings included)";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace tessera
