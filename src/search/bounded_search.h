// Bounded search: the exact collage search under a memory budget, and an honest answer when the
// budget is not enough.
//
// Why a budget. The exact search's states are (covered set, frontier) pairs (collage_search.h,
// crossing_accounting.h). After reduction a frontier entry says only what a later step can still
// be charged for, so for a covered set S the states number at most
//
//     prod over v in F(S) of  P(v) * 2^R(v)
//
// where F(S) is the tracked frontier (values produced in S, read outside it, with a non-zero price
// to some backend that may still read them), P(v) the price classes of v's possible producers and
// R(v) the price classes of the backends that may still read v. With layout conversions as the
// only prices a class is a boundary layout, so with L layouts the bound is (L * 2^L)^w, w = |F(S)|:
// 8^w for tessera's two layouts (plain, nhwc). On a graph whose frontier stays wide while backends
// alternate (a U-Net with long skips, every convolution quantized) that is more than any machine
// holds, so the search takes a budget (CollageOptions::memory_budget) and stops when it would pass.
//
// What happens then, deterministically:
//   1. layout-blind: the exact search with crossings ignored (states = covered sets). Its optimum
//      LB is a lower bound on every plan's total, crossings being >= 0; its plan priced with
//      crossings (price_cover) is one answer.
//   2. beam: the search with one state per covered set, crossings charged along each path: the
//      other answer. The cheaper of the two is the plan (ties: the beam's).
//   If 1 passes the budget too, LB is the per-node bound (each node's cheapest share of a
//   candidate holding it: sum over nodes of min over candidates C holding it of cost(C) / |C|);
//   if both pass it, greedy_search answers (it needs no memory beyond the graph's). Each step
//   gets the whole budget: they run one after another and free what they held.
//
//   exact search > budget  ->  blind LB 4.10 (plan 4.62) | beam 4.45  ->  beam, gap 0.35 (8.5%)
//
// The answer says it was not proven optimal, which fallback gave it and LB (SearchResult::bound),
// and the plan records them ("optimality" in plan.h). What is not needed for correctness: the
// budget counts the search's own tables by estimate (collage_search.cc); allocator slack and the
// rest of the process are outside it, so the budget is a fraction of the machine's memory.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "search/collage_search.h"
#include "search/search_problem.h"

namespace tessera {

// The default budget: an eighth of the machine's physical memory, at most 256 MiB. A search that
// needs more has spent seconds on frontier variants whose costs differ by crossings; past that the
// fallbacks answer in a fraction of the time and say how far from the optimum they can be, and
// --search-memory buys exactness where a user wants it.
size_t default_search_memory();

// collage_search(problem, options) when it fits options.memory_budget; else the fallbacks above.
// `backend_order` is greedy's priority order (the --backends order). Greedy cannot honour
// options.allowed, so with an allow-list and both fallbacks out of memory it throws UserError.
SearchResult bounded_collage_search(const SearchProblem& problem, const CollageOptions& options,
                                    const std::vector<std::string>& backend_order);

// The per-node lower bound on every plan's total (step 1's replacement).
Cost per_node_lower_bound(const SearchProblem& problem, const std::vector<char>& allowed);

}  // namespace tessera
