// Lagrangian choice of reduced-precision candidates under an error budget (accuracy_budget.h).
#include "search/accuracy_budget.h"

#include <cmath>

#include "search/collage_search.h"
#include "partition/sub_graph.h"

namespace tessera {
namespace {

bool is_anchor(const std::string& op) { return op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm"; }

struct Trial {
  SearchResult result;
  double proxy = 0.0;
  int reduced = 0;
};

}  // namespace

double budget_prior_error(const SearchProblem& problem, int candidate) {
  const Graph& graph = problem.index->graph();
  int anchors = 0;
  for (int n : problem.candidates[static_cast<size_t>(candidate)].inside().members())
    anchors += is_anchor(graph.node(n).op) ? 1 : 0;
  return anchors * std::ldexp(1.0, -8);
}

BudgetChoice choose_within_budget(const SearchProblem& problem, const std::vector<double>& error, double budget) {
  const size_t n = problem.candidates.size();
  BudgetChoice choice;
  std::vector<char> usable(n, 1);
  for (size_t i = 0; i < n; ++i)
    if (error[i] > budget) usable[i] = 0;   // no feasible plan holds it

  SearchProblem penalized = problem;        // prepared already: by_node does not change with lambda
  auto run = [&](double lambda) {
    for (size_t i = 0; i < n; ++i)
      if (usable[i] && problem.costs[i].is_value() && error[i] > 0)   // unusable ones may have error +inf
        penalized.costs[i] = Cost::value(problem.costs[i].number() + lambda * error[i]);
    Trial t;
    t.result = collage_search(penalized, CollageOptions{IndexSet(), usable});
    ++choice.searches;
    for (int c : t.result.chosen)
      if (error[static_cast<size_t>(c)] >= 0) {
        t.proxy += error[static_cast<size_t>(c)];
        ++t.reduced;
      }
    return t;
  };

  double lambda = 0.0;
  Trial best = run(0.0);
  if (best.result.found && best.proxy > budget) {
    // Upper end: doubling from a lambda at which the budget's worth of error costs the whole plan.
    const double plan_cost = best.result.total.is_value() ? best.result.total.number() : 1.0;
    double lo = 0.0, hi = (plan_cost > 0 ? plan_cost : 1.0) / std::max(budget, 1e-12);
    Trial at_hi = run(hi);
    for (int k = 0; k < 64 && at_hi.result.found && at_hi.proxy > budget; ++k) {
      lo = hi;
      hi *= 2.0;
      at_hi = run(hi);
    }
    choice.feasible = at_hi.result.found && at_hi.proxy <= budget;
    if (choice.feasible) {
      for (int k = 0; k < 24 && hi > lo * 1.01; ++k) {
        const double mid = lo > 0 ? std::sqrt(lo * hi) : hi / 16.0;
        Trial t = run(mid);
        if (t.result.found && t.proxy <= budget) {
          hi = mid;
          at_hi = std::move(t);
        } else {
          lo = mid;
        }
      }
    }
    lambda = hi;
    best = std::move(at_hi);
  }
  choice.lambda = lambda;
  choice.proxy = best.proxy;
  choice.reduced = best.reduced;
  choice.allowed.assign(n, 0);
  for (size_t i = 0; i < n; ++i) choice.allowed[i] = usable[i] && error[i] < 0 ? 1 : 0;
  for (int c : best.result.chosen) choice.allowed[static_cast<size_t>(c)] = 1;
  return choice;
}

}  // namespace tessera
