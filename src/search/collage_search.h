// Collage search: the cheapest acyclic plan, by Dijkstra over producer-closed covered sets.
//
// Terms. A state is a covered set S of nodes (plus, with several devices or priced backend
// boundaries, the frontier of crossing_accounting.h). S is always closed under producers: every producer of a node in S is
// in S. A candidate C is *ready* at S when it is disjoint from S and all its external producers
// ext(C) (nodes outside C feeding C) are in S. The search starts at S = {} and moves from S to
// S | C for ready candidates C, paying cost(C) + the transfers and boundaries C causes; it stops
// when it pops the full set. The queue is a binary heap (std::priority_queue) ordered by (cost +
// estimate, S's IndexSet order, frontier), so ties break the same way on every run and every
// thread count; stale entries are skipped on pop (lazy deletion).
//
// A*: the estimate h(S) is the sum over uncovered nodes v of share(v), v's cheapest share of a
// candidate holding it (cost(C) / |C|, scaled down by 1e-9 so float sums stay below the costs they
// split). Covering C lowers h by the shares of C's nodes, at most cost(C), and crossings only add,
// so h is consistent: the search is Dijkstra on costs reduced by h's drop, each >= 0, and still
// pops the full set at the optimum. It only settles fewer states: those whose cost plus estimate
// is below the optimum, instead of all whose cost is.
//
//   x ─▶ r0=Relu ─▶ a=Abs ─▶ r1=Relu ─▶ out=Add(a, r1)
//   {} ─byoc{r0} 1.0─▶ {r0} ─tvm{a} 2.0─▶ {r0,a} ─byoc{r1,out} 1.9─▶ all   = 4.9
//
// Which ready candidates to expand. Collage expands only candidates containing the lowest
// uncovered node n (lowest in a topological order: tessera takes a depth-first post-order from
// the sinks that visits producers with more ancestors first, so that a node written early in the
// model but read late comes just before its reader; in model order such a node stays the lowest
// uncovered one while a candidate fusing it with its reader pulls the reader's whole ancestry into
// N* below, and the search covers the graph's source nodes in every combination). With the readiness rule that is not enough: in
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
// containing v, disjoint from S or not): that only adds expansions; any topological order works
// for n. Scale: states grow with the graph's width (number of down-sets reachable), not with its
// size; BERT-style graphs settle in a few states per node. With crossings the states of one
// covered set grow with the frontier (bounded_search.h states the bound); the search takes a
// memory budget and answers out_of_memory when it would pass it.
#pragma once

#include <vector>

#include "search/search_problem.h"

namespace tessera {

struct CollageOptions {
  IndexSet initial;            // nodes treated as already covered (empty or size 0: none)
  std::vector<char> allowed;   // per candidate; empty = all usable candidates allowed
  // What the search may hold (states, their keys, the queue, the dominance table), in bytes, by
  // the estimate of collage_search.cc; 0 = no limit. A search that would pass it stops and
  // answers out_of_memory (bounded_search.h decides what to do then).
  size_t memory_budget = 0;
  // Crossings ignored: the state is the covered set alone and a path's cost the sum of its
  // candidates' costs, so the optimum found is a lower bound on every plan's total (transfers and
  // boundaries are >= 0). The answer's `chosen` is a valid plan; price_cover prices it.
  bool ignore_crossings = false;
  // Beam: one state per covered set, the first to reach it at the lowest cost; crossings are
  // charged along each path as usual, but a dearer path that would have crossed less later is
  // forgotten, so the plan is not proven optimal. States are then at most the covered sets.
  bool one_state_per_cover = false;
};

SearchResult collage_search(const SearchProblem& problem, const CollageOptions& options = {});

}  // namespace tessera
