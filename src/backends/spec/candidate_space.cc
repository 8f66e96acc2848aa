// Enumerating every backend's candidates, in parallel across backends, deterministically.
#include "backends/spec/candidate_space.h"

#include <algorithm>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace tessera {

std::vector<Candidate> CandidateSpace::all() const {
  std::vector<Candidate> out;
  out.reserve(size());
  for (const auto& b : per_backend) out.insert(out.end(), b.candidates.begin(), b.candidates.end());
  std::stable_sort(out.begin(), out.end(), candidate_less);
  return out;
}

size_t CandidateSpace::size() const {
  size_t n = 0;
  for (const auto& b : per_backend) n += b.candidates.size();
  return n;
}

CandidateSpace enumerate_candidates(const DataflowIndex& index, const std::vector<BackendSpec>& backends,
                                    int threads) {
  CandidateSpace space;
  space.per_backend.resize(backends.size());
  auto one = [&](size_t i) {
    BackendCandidates& out = space.per_backend[i];
    out.backend = backends[i].name;
    PartitionRulePtr rule = backends[i].make_rule();
    out.rule = rule->describe();
    out.candidates = rule->run(RuleContext{index, backends[i].name, out.stats});
  };
  if (threads <= 1 || backends.size() <= 1) {
    for (size_t i = 0; i < backends.size(); ++i) one(i);
  } else {
    tbb::task_arena arena(threads);
    arena.execute([&] { tbb::parallel_for(size_t{0}, backends.size(), one); });
  }
  return space;
}

}  // namespace tessera
