// Parallel, cached, deterministic cost estimation. See src/cost_models/estimator.h.
#include "cost_models/estimator.h"

#include <chrono>
#include <map>

#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "tessera/error.h"
#include "ir/structural_hash.h"

namespace tessera {

namespace {
std::string backend_key(const CostRequest& r) {
  return r.backend_version.empty() ? r.backend : r.backend + "@" + r.backend_version;
}
}  // namespace

CostKey cost_key(const CostModel& model, const CostRequest& r) {
  return CostKey{hash_hex(r.hash), backend_key(r), model.device_fingerprint(r.device), model.fingerprint()};
}

namespace {
// One distinct function to price: the first request that asked for it.
struct Unique {
  size_t first;        // index into requests
  bool cacheable;      // false for a hash collision: its key belongs to another function
  CostEntry entry;
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
  // Fingerprints may be costly to compute and are the same for every request of a device.
  const std::string model_fp = model.fingerprint();
  std::map<std::string, std::string, std::less<>> device_fp;
  for (size_t i = 0; i < requests.size(); ++i) {
    const CostRequest& r = requests[i];
    TESSERA_CHECK(r.function != nullptr, "CostRequest without a function");
    auto fp = device_fp.find(r.device);
    if (fp == device_fp.end()) fp = device_fp.emplace(r.device, model.device_fingerprint(r.device)).first;
    keys.push_back(CostKey{hash_hex(r.hash), backend_key(r), fp->second, model_fp});
    std::vector<size_t>& slots = slots_by_key[keys.back()];
    size_t found = unique.size();
    for (size_t s : slots) {
      if (structurally_equal(*requests[unique[s].first].function, *requests[i].function)) {
        found = s;
        break;
      }
    }
    if (found == unique.size()) {
      unique.push_back(Unique{i, slots.empty(), CostEntry{Cost::unknown(), 0.0, 0}});
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
      unique[s].entry = *hit;
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
      u.entry = model.estimate_entry(requests[u.first]);
    });
  });
  result.stats.estimated = misses.size();

  // Unknown is "not priced": caching it would hide a later real answer.
  if (options.database) {
    for (size_t s : misses) {
      if (unique[s].cacheable && !unique[s].entry.cost.is_unknown()) {
        options.database->insert(keys[unique[s].first], unique[s].entry);
      }
    }
  }

  result.costs.reserve(requests.size());
  result.errors.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    result.costs.push_back(unique[slot_of[i]].entry.cost);
    result.errors.push_back(unique[slot_of[i]].entry.error);
  }
  result.stats.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace tessera
