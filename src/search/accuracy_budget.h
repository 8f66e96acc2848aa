// Accuracy as a second resource: which reduced-precision candidates a plan may use so that the
// sum of their errors stays within a budget (the proxy of an end-to-end error budget).
//
// Terms. A candidate on a precision variant (onednn_bf16) has an error e_i >= 0: its measured
// relative L2 error against fp32 (CostEntry::error), or a prior when it was not measured
// (budget_proxy_error). fp32 candidates have e_i = 0. The proxy of a plan is the sum of e_i over
// its candidates. For small independent relative errors that pass through layers which do not
// amplify them, the end-to-end relative error is at most about that sum (first order: errors
// add, the cross terms are products of small numbers); it is only a proxy, which is why the caller
// verifies the whole plan end to end and tightens (src/runtime/accuracy_budget.cc).
//
// Problem: min cost(P) subject to proxy(P) <= B, over acyclic plans. This is a resource-
// constrained shortest path (NP-hard in general), so tessera does not solve it exactly. Lagrangian
// relaxation: for lambda >= 0 the collage search on costs c_i + lambda * e_i is exact; proxy of
// its optimum is non-increasing in lambda (exchange argument: if lambda1 < lambda2 then
// c(P1) + lambda1 e(P1) <= c(P2) + lambda1 e(P2) and the reverse at lambda2 give
// (lambda2 - lambda1)(e(P1) - e(P2)) >= 0), so a geometric bisection finds the smallest lambda whose
// plan P* meets the budget.
//
//   budget 0.01: lambda 0  -> 14 bf16 candidates, proxy 0.031   (too much)
//                lambda 3e-2 -> 5 candidates, proxy 0.0094      (the smallest feasible lambda found)
//   allowed = every fp32 candidate + the 5 reduced candidates of P*
//
// The answer is a mask over candidates, for collage_search's CollageOptions::allowed: the fp32
// candidates plus the reduced candidates P* uses (disjoint, as in any plan). The real search then
// runs on the true costs within that mask: any plan it can build uses a subset of P*'s reduced
// candidates, so its proxy is <= proxy(P*) <= B (sound), and it costs at most cost(P*) (it may
// trade a reduced candidate for a cheaper fp32 one, never add one). Reduced candidates with
// e_i > B are masked out from the start (no feasible plan holds one).
//
// Guarantee: proxy(plan) <= B whenever some plan meets B (the all-fp32 plan, proxy 0, does when
// fp32 backends cover the graph). Optimality: only the Lagrangian's (the duality gap may leave a
// cheaper feasible plan unfound). Cost: one problem copy plus 1 + doublings + bisection steps
// searches (<= 1 + 64 + 24; a few tens on the bundled models, milliseconds each).
//
// Not needed for correctness: the bisection's precision (any feasible lambda is sound).
#pragma once

#include <vector>

#include "search/search_problem.h"

namespace tessera {

// The prior error of a reduced-precision candidate that was not measured (roofline, mock): one
// bf16 rounding of the inputs of each of its convolutions and matmuls, 2^-8 relative (bf16's unit
// roundoff) per anchor; measured ones are 2-3e-3 per layer on N(0,1) data.
double budget_prior_error(const SearchProblem& problem, int candidate);

struct BudgetChoice {
  std::vector<char> allowed;   // per candidate: may the final search use it
  double lambda = 0.0;         // the Lagrange multiplier of the chosen plan (seconds per unit error)
  double proxy = 0.0;          // proxy error of P* (sum of its reduced candidates' errors)
  int reduced = 0;             // reduced candidates in P*
  int searches = 0;            // collage searches run
  bool feasible = true;        // false: no plan meets the budget (P* is the least-error plan found)
};

// `error[i]` >= 0 for reduced-precision candidates, < 0 for fp32 ones (never limited).
BudgetChoice choose_within_budget(const SearchProblem& problem, const std::vector<double>& error, double budget);

}  // namespace tessera
