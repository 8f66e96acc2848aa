// One bench row: plan, predicted cost, measured latency (see bench.h).
#include "runtime/bench.h"

#include "tessera/backend_spec.h"
#include "tessera/error.h"
#include "tessera/executor.h"
#include "tessera/latency.h"

namespace tessera {

BenchRow bench_combination(const Graph& graph, const std::vector<HostTensor>& inputs, const std::vector<std::string>& backends,
                           const CostModel& cost_model, const BenchOptions& options) {
  BenchRow row;
  row.backends = backends;
  try {
    PartitionOptions po;
    po.model_path = options.model_path;
    po.search = options.search;
    po.database = options.database;
    po.coalesce = options.coalesce;
    po.measure_wholes = cost_model.name() == "measure";
    const std::vector<BackendSpec> specs = resolve_backends(backends, {});
    PartitionOutcome outcome = partition_within_budget(graph, specs, cost_model, po, options.budget);
    if (options.choose) options.choose(specs, po, outcome);
    row.chosen = outcome.plan.verified_choice;
    if (outcome.plan.accuracy) row.rel_error = outcome.plan.accuracy->verified_error;
    if (cost_model.name() != "mock" && outcome.plan.total_cost.is_value()) row.predicted_ms = outcome.plan.total_cost.number() * 1e3;
    Executor executor(graph, outcome.plan);
    row.measured_ms = measure_latency(executor, inputs, options.repeat).median_ms;
  } catch (const UserError& e) {
    row.error = e.what();
  } catch (const KernelUnsupported& e) {
    row.error = e.what();
  }
  return row;
}

}  // namespace tessera
