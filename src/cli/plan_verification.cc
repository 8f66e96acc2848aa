#include "plan_verification.h"

#include <cstdio>

#include "tessera/error.h"
#include "tessera/verified_choice.h"

namespace tessera::cli {

std::vector<std::string> verify_plan(const Graph& graph, const std::vector<BackendSpec>& backends,
                                     const CostModel& model, const PartitionOptions& options,
                                     PartitionOutcome& outcome, CostDatabase* database, bool may_measure) {
  if (options.search != "collage") return {};
  std::vector<PlanContender> contenders;
  contenders.push_back({options.search, outcome.plan, {}, false, {}});
  for (const BackendSpec& b : backends) {
    if (b.all_ops) continue;   // a fallback (ref): every single-backend plan already leans on it
    PartitionOptions single = options;
    single.search = "single:" + b.name;
    try {
      contenders.push_back({single.search, partition_graph(graph, backends, model, single).plan, {}, false, {}});
    } catch (const UserError&) {
      // No plan with that backend (e.g. it covers nothing the fallback cannot): not a contender.
    }
  }
  VerifyOptions vo;
  vo.may_measure = may_measure;
  size_t best = choose_fastest_plan(graph, contenders, database, model, vo);
  if (contenders.size() < 2) return {};
  // Undecided (some contender neither measured nor known not to run): the search's plan, untouched.
  for (const PlanContender& c : contenders)
    if (!c.latency_ms && c.failed.empty()) return {};
  std::vector<std::string> lines;
  for (size_t i = 0; i < contenders.size(); ++i) {
    const PlanContender& c = contenders[i];
    char buf[160];
    if (c.latency_ms)
      std::snprintf(buf, sizeof buf, "%-16s %9.3f ms  (%s)%s", c.label.c_str(), *c.latency_ms,
                    c.measured_now ? "measured now" : "from the database", i == best ? "  <- chosen" : "");
    else
      std::snprintf(buf, sizeof buf, "%-16s %12s  (%s)", c.label.c_str(), "-",
                    c.failed.empty() ? "not measured" : "does not run here");
    lines.push_back(buf);
  }
  Plan chosen = contenders[best].plan;
  chosen.verified_choice = contenders[best].label;
  for (const PlanContender& c : contenders)
    if (c.latency_ms) chosen.verified_ms.emplace_back(c.label, *c.latency_ms);
  outcome.plan = std::move(chosen);
  return lines;
}

}  // namespace tessera::cli
