// Collage search: the cheapest acyclic plan, by Dijkstra over producer-closed covered sets.
//
// Terms. A state is a covered set S of nodes (plus, with several devices or priced backend
// boundaries, the frontier of crossing_accounting.h). S is always closed under producers: every producer of a node in S is
// in S. A candidate C is *ready* at S when it is disjoint from S and all its external producers
// ext(C) (nodes outside C feeding C) are in S. The search starts at S = {} and moves from S to
// S | C for ready candidates C, paying cost(C) + the transfers and boundaries C causes; it stops
// when it pops the full set. The queue is a binary heap (std::priority_queue) ordered by (cost, S's IndexSet order,
// frontier), so ties break the same way on every run and every thread count; stale entries are
// skipped on pop (lazy deletion).
//
//   x ─▶ r0=Relu ─▶ a=Abs ─▶ r1=Relu ─▶ out=Add(a, r1)
//   {} ─byoc{r0} 1.0─▶ {r0} ─tvm{a} 2.0─▶ {r0,a} ─byoc{r1,out} 1.9─▶ all   = 4.9
//
// Which ready candidates to expand. Collage expands only candidates containing the lowest
// uncovered node n. With the readiness rule that is not enough: in
//   0: a=Relu(x)  1: p=Relu(x)  2: m=Add(a, p)        plan {a, m} {p}   (acyclic: {p} -> {a,m})
// the partition holding n = a is not ready at S = {} (m needs p), so the plan would be lost.
// tessera expands every ready candidate that meets N*(S), the closure of {n} under
//   v -> Q(v) \ S,   Q(v) = union of ext(C) over candidates C containing v,
// i.e. n, the uncovered producers of anything that could hold n, their uncovered producers, ...
// In a chain N* = {n} (every producer is below n, hence covered) and this is Collage's rule.
//
// Acyclicity. A candidate is added only when every node feeding it from outside is already
// covered, so every edge of the partition DAG goes from an earlier-added partition to a later one:
// the order of addition is a topological order, and no plan the search builds has a cycle. (The
// candidates themselves are convex and valid; the rules guarantee that.)
//
// Optimality among acyclic plans. Let P be any acyclic plan and S a down-set of P's partition DAG
// (S = {} to start). Let C_n be P's partition holding n = min uncovered node and B the partitions
// of P outside S from which C_n can be reached (C_n included; a path from Y to C_n never passes
// through S, because S is a down-set). Every X in B meets N*: C_n holds n; if Y -> X with X
// meeting N* at v, a node y of Y feeds X from outside, y is not in S, and y is in ext(X), which
// is within Q(v), so y is in N*. B is finite and acyclic, so it has a member A with no
// predecessor in B; A's predecessors are ancestors of C_n, so none is outside S: A is ready and
// meets N*, so the search expands S -> S | A, again a down-set of P. By induction every acyclic
// plan is a path from {} to the full set whose length is its cost (costs, transfers and
// boundaries are >= 0, and the crossings a step causes depend only on the state and the step:
// the frontier records where each value still to be read lives and where it was already handed). Dijkstra pops the full set at the minimum over all
// paths, so the plan is optimal among acyclic plans; ties resolve by the queue order above.
//
// What is not needed for correctness: N* may be over-approximated (Q(v) uses every candidate
// containing v, disjoint from S or not): that only adds expansions. Scale: states grow with the
// graph's width (number of down-sets reachable), not with its size; BERT-style graphs settle in
// a few states per node.
#pragma once

#include <vector>

#include "search/search_problem.h"

namespace tessera {

struct CollageOptions {
  IndexSet initial;            // nodes treated as already covered (empty or size 0: none)
  std::vector<char> allowed;   // per candidate; empty = all usable candidates allowed
};

SearchResult collage_search(const SearchProblem& problem, const CollageOptions& options = {});

}  // namespace tessera
