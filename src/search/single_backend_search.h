// Single-backend search (`--search single:<backend>`): one backend takes everything it can, the
// rest goes to a fallback backend that takes every op (the first such in --backends).
//
//   single:onednn, --backends ref,onednn on Conv->Relu->Reshape->MatMul:
//     onednn may use any of its candidates; ref may only take Reshape (onednn cannot)
//
// Within that restriction the plan is the cheapest acyclic one (collage_search over the allowed
// candidates), so "single" answers "what does this backend alone give me?" fairly. If the
// restriction leaves no acyclic cover (a node the backend supports only inside candidates that
// cannot be combined), the fallback is allowed everywhere as a second try.
#pragma once

#include <string>

#include "search/search_problem.h"

namespace tessera {

// Both searches run under `memory_budget` (bounded_search.h; 0: no limit).
SearchResult single_backend_search(const SearchProblem& problem, const std::string& backend,
                                   const std::string& fallback, size_t memory_budget = 0);

}  // namespace tessera
