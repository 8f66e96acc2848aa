// Per-call timing of an executor run, matched with the plan's partition costs (see call_profile.h).
#include "runtime/call_profile.h"

#include <algorithm>
#include <unordered_map>

#include "runtime/executor.h"
#include "runtime/run_clock.h"
#include "support/median.h"

namespace tessera {

std::vector<CallProfile> profile_calls(Executor& executor, const std::vector<HostTensor>& inputs, int repeat,
                                       std::vector<double>* run_ms, const std::function<void()>& on_step) {
  const RunClock clock = plan_run_clock();
  std::vector<CallProfile> calls;
  std::vector<std::vector<double>> samples;
  size_t step = 0;
  double last = 0.0;
  StepObserver observer;
  observer.reads_outputs = false;
  observer.on_step = [&](const KernelCall& call, const std::vector<std::string>&, std::span<const TensorView>) {
    const double now = run_clock_ms(clock);
    if (step >= calls.size()) {
      calls.push_back(CallProfile{call.kernel, call.label});
      samples.emplace_back();
    }
    samples[step++].push_back(now - last);
    if (on_step) on_step();
    last = run_clock_ms(clock);
  };
  executor.run(inputs);   // warm-up
  for (int r = 0; r < std::max(1, repeat); ++r) {
    step = 0;
    const double start = run_clock_ms(clock);
    last = start;
    executor.run(inputs, &observer);
    if (run_ms) run_ms->push_back(run_clock_ms(clock) - start);
  }
  for (size_t i = 0; i < calls.size(); ++i) calls[i].median_ms = median(std::move(samples[i]));
  return calls;
}

void attach_plan_costs(std::vector<CallProfile>& calls, const Executor& executor, const Plan& plan) {
  const Graph& model = executor.model();
  std::unordered_map<std::string, size_t> partition_of;   // model node name -> partition
  for (size_t p = 0; p < plan.partitions.size(); ++p)
    for (NodeId n = 0; n < model.num_nodes(); ++n)
      if (plan.partitions[p].nodes.contains(n)) partition_of[model.node(n).name] = p;
  // A layout conversion (kernel "layout.<from>-><to>", labelled with the value's name) is
  // predicted by the plan's boundary costs charged on that value.
  std::unordered_map<std::string, double> boundary_ms;
  for (const Boundary& b : plan.boundaries)
    if (b.value >= 0 && b.value < static_cast<ValueId>(model.values.size()) && b.cost.is_value())
      boundary_ms[model.value(b.value).name] += b.cost.number() * 1e3;
  for (CallProfile& c : calls) {
    if (c.kernel.starts_with("layout.")) {
      c.backend = "(crossing)";
      auto it = boundary_ms.find(c.label);
      c.predicted_ms = it == boundary_ms.end() ? 0.0 : it->second;
      continue;
    }
    auto from = executor.module().outlined_from.find(c.label);
    if (from == executor.module().outlined_from.end() || from->second.empty()) continue;
    c.nodes = from->second;
    auto p = partition_of.find(from->second.front());
    if (p == partition_of.end()) continue;
    const Partition& part = plan.partitions[p->second];
    c.backend = part.backend;
    c.partition = static_cast<int>(p->second);
    if (part.cost.is_value()) c.predicted_ms = part.cost.number() * 1e3;
  }
}

}  // namespace tessera
