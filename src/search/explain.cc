#include "search/explain.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "search/collage_search.h"
#include "search/cost_display.h"
#include "support/plural.h"
#include "search/search_kind.h"

namespace tessera {
namespace {

std::string alternative(const PartitionOutcome& outcome, const Partition& p) {
  const std::string& unit = outcome.plan.cost_model;
  const SearchProblem& problem = outcome.problem;
  CollageOptions options;
  options.initial = p.nodes.complement();
  options.allowed.assign(problem.candidates.size(), 0);
  for (size_t c = 0; c < problem.candidates.size(); ++c)
    options.allowed[c] = problem.candidates[c].backend != p.backend && problem.candidates[c].inside().is_subset_of(p.nodes);
  SearchResult r = collage_search(problem, options);
  if (!r.found) return "none (no other backend can cover these nodes)";
  std::map<std::string, int> per;
  for (int c : r.chosen) ++per[problem.candidates[size_t(c)].backend];
  std::ostringstream o;
  bool first = true;
  for (const auto& [b, k] : per) {
    o << (first ? "" : " + ") << b << " x" << k;
    first = false;
  }
  Cost base;
  for (int c : r.chosen) base += problem.costs[size_t(c)];
  o << " = " << display_cost(base, unit);
  if (base.is_value() && p.cost.is_value()) {
    const bool worse = base >= p.cost;
    const Cost d = Cost::value(worse ? base.number() - p.cost.number() : p.cost.number() - base.number());
    o << " (" << (worse ? "+" : "-") << display_cost(d, unit) << ")";
  }
  return o.str();
}

}  // namespace

std::string nodes_label(const IndexSet& nodes, const Graph& graph) {
  std::string s;
  nodes.for_each([&](int v) { s += (s.empty() ? "" : "+") + graph.node(v).op; });
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}


std::string explain_plan(const PartitionOutcome& outcome, const Graph& graph) {
  const Plan& plan = outcome.plan;
  auto cost = [&](const Cost& c) { return display_cost(c, plan.cost_model); };
  std::ostringstream o;
  o << "plan: " << count_of(plan.partitions.size(), "partition") << ", total " << cost(plan.total_cost) << " (transfer "
    << cost(plan.transfer_cost) << ", boundary " << cost(plan.boundary_cost) << "), search " << plan.search
    << ", cost " << plan.cost_model << "\n";
  for (const PlanSteering& st : plan.steering)
    o << "steering: " << st.rule.kind_name() << " " << st.rule.text() << "  (" << count_of(size_t(st.nodes.count()), "node")
      << ": only the candidates it allows were priced and searched)\n";
  if (!plan.verified_choice.empty()) {
    o << "race: ";
    if (plan.verified_choice == plan.search) o << "the search's plan was fastest end to end";
    else o << "the end-to-end race overrode the search: it ships " << plan.verified_choice << ", not the " << plan.search
           << " search's plan (the partitions below are " << plan.verified_choice << "'s)";
    o << "; latencies:";
    for (const auto& [label, ms] : plan.verified_ms) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " %s %.3f ms%s", label.c_str(), ms, label == plan.verified_choice ? " (chosen)" : "");
      o << buf;
    }
    o << "\n";
  }
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    o << "partition " << i << "  " << p.backend << "  " << count_of(size_t(p.nodes.count()), "node") << "  " << nodes_label(p.nodes, graph)
      << "  cost " << cost(p.cost) << "  fn " << p.function << "\n";
    for (const ChosenCandidate& c : p.candidates) {
      o << "    candidate " << nodes_label(c.nodes, graph) << " " << c.nodes.to_string() << " rule " << c.rule << " cost "
        << cost(c.cost);
      for (const Composite& k : c.composites) o << " [" << k.name << "]";
      o << "\n";
    }
    o << "    alternative: " << alternative(outcome, p) << "\n";
  }
  for (const Boundary& b : plan.boundaries)
    o << "boundary " << graph.value(b.value).name << "  " << b.from << " -> " << b.to << "  " << b.bytes << " bytes  cost "
      << cost(b.cost) << "\n";
  const SearchStats& s = plan.stats;
  o << "stats: " << s.candidates << " candidates, " << s.costed << " costed functions ("
    << outcome.estimate_stats.cache_hits << " cache hits), " << s.states << " states settled, " << s.states_pushed
    << " pushed, " << s.states_popped << " popped\n";
  const SearchBound& bound = outcome.search.bound;
  o << "optimality: ";
  if (plan.optimality)
    o << "not proven (the exact search passed its " << (bound.memory_budget >> 20) << " MB; " << plan.optimality->fallback
      << " fallback), lower bound " << cost(plan.optimality->lower_bound) << ", gap " << cost(plan.optimality->gap);
  else if (std::optional<SearchKind> kind = SearchKind::parse(plan.search); kind && kind->exact())
    o << "proven optimal under these costs";
  else if (kind && kind->kind == SearchKind::Kind::single)
    o << "proven optimal among the plans the search " << plan.search << " allows";
  else
    o << "none claimed (search " << plan.search << ")";
  o << "; the last search held about " << (outcome.search.stats.peak_bytes + (1 << 19)) / (1 << 20) << " MB\n";
  o << "time: enumerate " << s.enumerate_ms << " ms, estimate " << s.estimate_ms << " ms, search " << s.search_ms
    << " ms, coalesce " << s.coalesce_ms << " ms\n";
  for (const auto& [reason, count] : outcome.rule_stats.rejections) o << "rejected: " << count << " x " << reason << "\n";
  for (const std::string& l : outcome.limits) o << "limit: " << l << "\n";
  return o.str();
}

}  // namespace tessera
