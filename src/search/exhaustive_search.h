// Exhaustive search: the test oracle. Enumerates every exact cover of the nodes by usable
// candidates, keeps those whose partition DAG is acyclic, and returns the cheapest.
//
// Each exact cover is enumerated once: at every step the lowest uncovered node must be covered
// by some candidate of the cover, so the search branches over the candidates containing it.
// Unlike collage_search there is no readiness rule and no state merging, so it shares none of the
// reasoning that makes collage_search correct; acyclicity is checked on the finished cover.
// Branch and bound on the candidates' cost sum (transfers are >= 0, so a partial sum >= the best
// total can never win) keeps it fast enough for the ~14-node graphs it is meant for; `max_covers`
// bounds the work (the result says whether it was hit). Ties: the first cheapest cover found
// (covers are enumerated in candidate order), which may differ from collage's tie-break; compare
// total costs, not plans.
#pragma once

#include <cstdint>

#include "search/search_problem.h"

namespace tessera {

struct ExhaustiveOptions {
  int64_t max_covers = 50'000'000;   // complete covers examined before giving up
};

struct ExhaustiveResult {
  SearchResult result;
  bool complete = true;              // false when max_covers was hit
};

ExhaustiveResult exhaustive_search(const SearchProblem& problem, const ExhaustiveOptions& options = {});

}  // namespace tessera
