// A plan's backends against this build. See plan_backends.h.
#include "runtime/plan_backends.h"

#include <algorithm>

#include "backends/compilers/backend_compiler.h"
#include "tessera/backend_spec.h"
#include "tessera/error.h"
#include "cost_models/machine.h"
#include "search/steering.h"

namespace tessera {

std::vector<std::string> check_plan_backends(const Plan& plan, const Graph& graph, const std::string& file,
                                             bool allow_fallback) {
  const std::vector<std::string> runs = backend_compiler_names();
  std::string known;
  for (const std::string& b : runs) known += (known.empty() ? "" : ", ") + b;
  std::vector<std::string> notes;
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    const std::string place = "partitions[" + std::to_string(i) + "]";
    if (!std::binary_search(runs.begin(), runs.end(), p.backend)) {
      if (is_builtin_backend(p.backend))
        throw UserError(file, place + ".backend", "backend '" + p.backend +
                                                      "' does not run on this machine (a cost-model backend; "
                                                      "backends that run here: " + known + ")");
      throw UserError(file, place + ".backend", "unknown backend '" + p.backend + "' (backends that run here: " + known + ")");
    }
    if (!is_builtin_backend(p.backend)) continue;   // a compiler without a spec: it judges its nodes itself
    const BackendSpec spec = builtin_backend_spec(p.backend);
    p.nodes.for_each([&](int n) {
      const std::optional<std::string> why = spec_refuses(spec, graph, NodeId(n));
      if (!why) return;
      const std::string what = "node '" + graph.node(n).name + "' cannot run on " + p.backend + ": " + *why;
      if (!allow_fallback)
        throw UserError::mentioning(file, place + ".nodes", what + " (move it to a backend that takes it, or allow a fallback "
                                                                   "to ref with " + mention("allow_fallback") + ")");
      notes.push_back(place + ": " + what + "; the partition runs on ref's kernels if " + p.backend + " cannot compile it");
    });
  }
  return notes;
}

std::optional<ErrorText> plan_machine_mismatch(const Plan& plan, int threads, const std::string& file) {
  if (!plan.tuned_on) return std::nullopt;
  const PlanMachine& m = *plan.tuned_on;
  const std::string here = machine_fingerprint();
  if (m.threads == threads && m.machine == here) return std::nullopt;
  auto at = [](int t, const std::string& machine) {
    return std::to_string(t) + " thread" + (t == 1 ? "" : "s") + " on " + machine;
  };
  return ErrorText(file + ": the plan was tuned at " + at(m.threads, m.machine) + "; this run uses " + at(threads, here) +
                   ": its measured choices may not hold (tune again here, or set ") +
         mention("threads") + " to " + std::to_string(m.threads) + ")";
}

}  // namespace tessera
