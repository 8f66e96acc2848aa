// Verified choice of a plan by end-to-end latency. See include/tessera/verified_choice.h.
#include "tessera/verified_choice.h"

#include <algorithm>
#include <memory>

#include "tessera/error.h"
#include "tessera/executor.h"
#include "tessera/latency.h"
#include "tessera/median.h"
#include "tessera/model_data.h"
#include "tessera/structural_hash.h"

namespace tessera {
namespace {

// What distinguishes two plans at run time: which backend runs which nodes, cut how.
std::string assignment_text(const Plan& plan) {
  std::string s;
  for (const Partition& p : plan.partitions) {
    s += p.backend + ":";
    p.nodes.for_each([&](int n) { s += std::to_string(n) + ","; });
    s += ";";
  }
  return s;
}

// plan_latency_key with the model's structural hash already computed (it is the same for every
// contender of one model, and hashing a large graph is not free).
CostKey latency_key(uint64_t graph_hash, const Plan& plan, const CostModel& model) {
  std::string device = plan.partitions.empty() ? "cpu" : plan.partitions.front().device;
  std::string identity = hash_hex(graph_hash) + "|" + assignment_text(plan);
  return CostKey{hash_hex(fnv1a64(identity)), "plan", model.device_fingerprint(device), model.fingerprint()};
}

}  // namespace

CostKey plan_latency_key(const Graph& graph, const Plan& plan, const CostModel& model) {
  return latency_key(structural_hash(graph), plan, model);
}

size_t choose_fastest_plan(const Graph& graph, std::vector<PlanContender>& contenders, CostDatabase* database,
                           const CostModel& model, const VerifyOptions& options) {
  // Distinct assignments only, first occurrence kept (the search's plan comes first).
  std::vector<std::string> seen;
  std::vector<PlanContender> distinct;
  for (PlanContender& c : contenders) {
    std::string a = assignment_text(c.plan);
    if (std::find(seen.begin(), seen.end(), a) != seen.end()) continue;
    seen.push_back(std::move(a));
    distinct.push_back(std::move(c));
  }
  contenders = std::move(distinct);
  if (contenders.size() < 2) return 0;

  // From the database where known.
  std::vector<CostKey> keys;
  const uint64_t graph_hash = structural_hash(graph);
  for (PlanContender& c : contenders) {
    keys.push_back(latency_key(graph_hash, c.plan, model));
    if (!database) continue;
    if (auto e = database->lookup(keys.back())) {
      if (e->cost.is_value()) c.latency_ms = e->cost.seconds() * 1e3;
      if (e->cost.is_invalid()) c.failed = e->cost.reason();
    }
  }

  // Measure the rest: compile all first, then interleaved rounds.
  std::vector<size_t> todo;
  for (size_t i = 0; i < contenders.size(); ++i)
    if (!contenders[i].latency_ms && contenders[i].failed.empty()) todo.push_back(i);
  if (!todo.empty() && options.may_measure) {
    std::vector<HostTensor> inputs = model_inputs(graph, 0);
    std::vector<std::unique_ptr<Executor>> executors(contenders.size());
    for (size_t i : todo) {
      try {
        executors[i] = std::make_unique<Executor>(graph, contenders[i].plan);
      } catch (const std::exception& e) {
        // A contender that does not build here cannot win; remembered, so a rerun agrees.
        contenders[i].failed = e.what();
        if (database) database->insert(keys[i], CostEntry{Cost::invalid(e.what()), 0.0, 0});
      }
    }
    std::vector<std::vector<double>> rounds(contenders.size());
    for (int r = 0; r < std::max(1, options.rounds); ++r)
      for (size_t i : todo)
        if (executors[i]) rounds[i].push_back(measure_latency(*executors[i], inputs, std::max(1, options.repeat)).median_ms);
    for (size_t i : todo) {
      if (rounds[i].empty()) continue;
      double ms = median(rounds[i]);
      contenders[i].latency_ms = ms;
      contenders[i].measured_now = true;
      if (database)
        database->insert(keys[i], CostEntry{Cost::value(ms * 1e-3), 0.0,
                                            static_cast<int64_t>(rounds[i].size()) * std::max(1, options.repeat)});
    }
  }

  for (const PlanContender& c : contenders)
    if (!c.latency_ms && c.failed.empty()) return 0;   // not every contender is known: keep the search's plan
  if (!contenders[0].latency_ms) return 0;             // the search's plan itself did not run: nothing to compare
  size_t best = 0;
  for (size_t i = 1; i < contenders.size(); ++i) {
    if (!contenders[i].latency_ms) continue;
    double bar = *contenders[best].latency_ms * (best == 0 ? 1.0 - options.tie_margin : 1.0);
    if (*contenders[i].latency_ms < bar) best = i;
  }
  return best;
}

}  // namespace tessera
