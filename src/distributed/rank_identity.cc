// A rank's hello and the check that two ranks may share one plan (see distributed_tune.h).
#include <unistd.h>

#include <climits>

#include "distributed/distributed_tune.h"
#include "cost_models/estimator.h"
#include "ir/structural_hash.h"

namespace tessera::distributed {

Hello describe_rank(int rank, const Work& work) {
  Hello h;
  h.rank = rank;
  char host[HOST_NAME_MAX + 1] = {};
  h.host = ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown-host";
  h.machine = machine_fingerprint();
  h.measure = work.model->fingerprint();
  h.threads = work.model->options().threads;
  h.slots = work.slots;
  h.requests = work.requests->size();
  std::string keys;
  for (const CostRequest& r : *work.requests) keys += cost_key(*work.model, r).to_string() + "\n";
  h.digest = hash_hex(fnv1a64(keys));
  return h;
}

std::optional<std::string> rank_mismatch(const Hello& a, const Hello& b) {
  auto who = [](const Hello& h) { return "rank " + std::to_string(h.rank) + " on host " + h.host; };
  if (a.machine != b.machine)
    return who(b) + " is machine '" + b.machine + "', " + who(a) + " is '" + a.machine + "'";
  if (a.measure != b.measure)
    return who(b) + " has backend libraries " + b.measure + ", " + who(a) + " has " + a.measure;
  if (a.threads != b.threads)
    return who(b) + " measures with " + std::to_string(b.threads) + " threads, " + who(a) + " with " +
           std::to_string(a.threads);
  if (a.requests != b.requests || a.digest != b.digest)
    return who(b) + " enumerated " + std::to_string(b.requests) + " candidates (digest " + b.digest + "), " +
           who(a) + " " + std::to_string(a.requests) + " (digest " + a.digest +
           "): other model files or another tessera build";
  return std::nullopt;
}

}  // namespace tessera::distributed
