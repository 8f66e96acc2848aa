// Parallel, cached, deterministic cost estimation. See include/tessera/estimator.h.
#include "tessera/estimator.h"

#include <chrono>
#include <map>

#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "tessera/error.h"
#include "tessera/structural_hash.h"

namespace tessera {

CostKey cost_key(const CostModel& model, const CostRequest& r) {
  std::string backend = r.backend_version.empty() ? r.backend : r.backend + "@" + r.backend_version;
  return CostKey{hash_hex(r.hash), std::move(backend), model.device_fingerprint(r.device), model.fingerprint()};
}

namespace {
// One distinct function to price: the first request that asked for it.
struct Unique {
  size_t first;        // index into requests
  bool cacheable;      // false for a hash collision: its key belongs to another function
  Cost cost;
};
}  // namespace

EstimateResult estimate_costs(const CostModel& model, const std::vector<CostRequest>& requests,
                              const EstimateOptions& options) {
  auto start = std::chrono::steady_clock::now();
  EstimateResult result;
  result.stats.requests = requests.size();

  // Dedupe in input order, so slot numbers do not depend on threads.
  std::vector<CostKey> keys;
  keys.reserve(requests.size());
  std::vector<Unique> unique;
  std::vector<size_t> slot_of(requests.size());
  std::map<CostKey, std::vector<size_t>> slots_by_key;   // key -> unique slots (>1 only on collision)
  for (size_t i = 0; i < requests.size(); ++i) {
    TESSERA_CHECK(requests[i].function != nullptr, "CostRequest without a function");
    keys.push_back(cost_key(model, requests[i]));
    std::vector<size_t>& slots = slots_by_key[keys.back()];
    size_t found = unique.size();
    for (size_t s : slots) {
      if (structurally_equal(*requests[unique[s].first].function, *requests[i].function)) {
        found = s;
        break;
      }
    }
    if (found == unique.size()) {
      unique.push_back(Unique{i, slots.empty(), Cost::unknown()});
      slots.push_back(found);
    }
    slot_of[i] = found;
  }
  result.stats.unique = unique.size();

  std::vector<size_t> misses;
  for (size_t s = 0; s < unique.size(); ++s) {
    std::optional<CostEntry> hit;
    if (options.database && unique[s].cacheable) hit = options.database->lookup(keys[unique[s].first]);
    if (hit) {
      unique[s].cost = hit->cost;
      ++result.stats.cache_hits;
    } else {
      misses.push_back(s);
    }
  }

  int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, misses.size(), [&](size_t m) {
      Unique& u = unique[misses[m]];
      u.cost = model.estimate(requests[u.first]);
    });
  });
  result.stats.estimated = misses.size();

  // Unknown is "not priced": caching it would hide a later real answer.
  if (options.database) {
    for (size_t s : misses) {
      if (unique[s].cacheable && !unique[s].cost.is_unknown()) {
        options.database->insert(keys[unique[s].first], CostEntry{unique[s].cost, 0.0, 0});
      }
    }
  }

  result.costs.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) result.costs.push_back(unique[slot_of[i]].cost);
  result.stats.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace tessera
