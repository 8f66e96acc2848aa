// Per-call profile of an Executor run, and plan fidelity per partition.
//
// Each call in main is timed from the end of the previous step to its own end (the executor's
// StepObserver fires after every step), over `repeat` runs after one warm-up; the median per call
// is kept. Matched with the plan, each call's measured time sits beside the partition's predicted
// cost, which is how `tessera run --profile` shows *where* a plan's prediction misses:
//
//   call  @tvmgen_default_onednn_main_3   /layers.0/MatMul+...   predicted 0.412 ms  measured 0.455 ms
//
// The clock is src/runtime/run_clock.h's plan_run_clock(): CPU time at one compute thread (what the
// in-plan prices of the cost database hold, so that a price measured under load still holds on a
// quiet machine), wall time above. The observer adds a clock read per step (a system call for
// CPU time, well under a microsecond), negligible against kernels of >= 10 us.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/host_tensor.h"
#include "tessera/plan.h"
#include "tessera/session.h"   // CallProfile

namespace tessera {

class Executor;  // runtime/executor.h

// `run_ms`, when given, receives each timed run's whole latency (the executor's run, start to end),
// observer included. `on_step`, when given, is called on every step of the timed runs, after the
// step's clock read (what an observer costs the run; tests make it costly).
std::vector<CallProfile> profile_calls(Executor& executor, const std::vector<HostTensor>& inputs, int repeat,
                                       std::vector<double>* run_ms = nullptr,
                                       const std::function<void()>& on_step = {});

// Fills predicted_ms, backend, partition and nodes from `plan`: a call whose outlined model nodes
// (Module::outlined_from) are one partition's nodes gets that partition's cost (seconds -> ms).
void attach_plan_costs(std::vector<CallProfile>& calls, const Executor& executor, const Plan& plan);

}  // namespace tessera
