// Measured wholes: price a coalesced partition as the one function it runs as, then search again.
//
// Terms. Coalescing (coalesce.h) merges touching chosen candidates of one backend into one
// partition, which emit outlines and a backend compiles as ONE function. Its real cost is not the
// sum of its candidates' costs: oneDNN fuses across them and skips the layout conversions between
// them (faster), a cache stays warm (faster), or a bigger function spills (slower). A *whole* is
// that coalesced partition offered back to the search as a candidate of its own (rule
// "<backend>.whole"), priced by the same cost model as every other candidate: measured on the
// real backend under `--cost measure`, so it lands in the cost database like any measurement.
//
//   round 1: search -> onednn{conv1} onednn{relu1} onednn{conv2}   coalesced into onednn{conv1,relu1,conv2}
//            price the whole: 0.41 ms (sum of parts 0.58 ms)
//   round 2: search over candidates + the whole -> picks the whole (or something cheaper still)
//   ... until a round adds no new whole (bounded by max_rounds).
//
// Exactness: each round's search is optimal over the candidates it has, and wholes only add
// candidates, so the final plan is optimal over the original candidates plus every whole priced
// on the way (never worse than round 1's plan, whose parts are all still there). The plan's cost
// of a partition picked as a whole is the whole's price, so the prediction is what runs. Where
// the search still prefers parts whose whole costs more (a whole is slower than its parts when
// they were timed with their data in cache and it streams through memory), the parts coalesce
// into that whole anyway: charge_wholes gives the partition the whole's price, so the plan's
// total is what it runs, no longer the relaxation's optimum.
// Determinism: wholes are built from the plan in partition order and merged into the sorted
// candidate list (candidate_less); nothing depends on thread count.
//
// Not needed for correctness, and not done: offering sub-unions of a partition. Only wholes of
// partitions the search actually formed are priced, so the extra cost is a handful of measurements
// per round (one per multi-candidate partition), each cached in the database.
#pragma once

#include <vector>

#include "search/search_problem.h"
#include "tessera/plan.h"

namespace tessera {

// The wholes of `partitions` (those with more than one candidate) that `problem` does not already
// hold as a candidate of the same backend and node set, in partition order.
std::vector<Candidate> whole_candidates(const SearchProblem& problem, const std::vector<Partition>& partitions);

// The plan as it runs: each partition of several candidates whose whole has a value price (in
// `problem`, or in `wholes`/`costs`, priced after the last round) becomes that one whole
// candidate at that price. The search chose the parts because their sum was cheaper, but emit
// compiles the partition as one function, so the whole's price is what it costs (resnet18 on
// onednn: 95 candidates summing to 16.2 ms, one function measured at 19.0 and running in 18.7).
// The backend of each partition, hence every crossing, is unchanged. Returns how many were
// replaced.
int charge_wholes(const SearchProblem& problem, std::vector<Partition>& partitions, const std::vector<Candidate>& wholes = {},
                  const std::vector<Cost>& costs = {});

// The plan as it can run: each partition of several candidates whose whole the backend cannot
// compile as one function (its price is invalid: xnnpack refuses a Reshape whose NCHW result is
// read inside a function that keeps rank-4 values NHWC) becomes one partition per candidate again,
// each a function that compiled and was priced alone. Without this, emit would outline the union,
// the backend would refuse it, and it would run on ref kernels at many times its price (shufflenet's
// single-xnnpack plan: 3 such functions, 45 ms against 7). The finer plan stays acyclic: the
// search's candidates are, and coalescing the other partitions only merges what it merged before.
// Returns how many partitions were split.
int split_unrunnable_wholes(const SearchProblem& problem, std::vector<Partition>& partitions,
                            const std::vector<Candidate>& wholes = {}, const std::vector<Cost>& costs = {});

// Adds candidates (with their costs, devices and measured errors, if any) to a prepared problem,
// keeping candidate_less order, and prepares it again.
void add_candidates(SearchProblem& problem, std::vector<Candidate> candidates, std::vector<Cost> costs,
                    std::vector<std::string> devices, std::vector<std::optional<double>> errors = {});

}  // namespace tessera
