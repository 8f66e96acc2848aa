// Whether a plan's partitions can run here as written: checked where a plan meets a runtime
// (`tessera run`, Session, Python's tessera.Session), before anything is compiled, so that an
// edited or foreign plan fails with one line naming the partition instead of somewhere inside
// codegen.
//
//   partitions[2] on "onednnn"           -> error: unknown backend, the backends that run here listed
//   partitions[0] on "tvm" (cost-only)   -> error: the backend does not run on this machine
//   node 'gather' (Gather, i64) on onednn -> error: its spec refuses the node (spec_refuses, the
//                                           partition rule's own reason), unless allow_fallback:
//                                           then a note, and the partition runs as the executor
//                                           runs any function its backend cannot compile (on ref's
//                                           kernels, reported by codegen_skipped)
//
// allow_fallback is opt-in (run --allow-fallback, SessionOptions::allow_fallback, Python
// allow_fallback=True) because a plan that silently runs a node elsewhere is not the plan that was
// priced, and a hand edit that moved a node onto a backend that cannot take it is usually a mistake.
//
// And where the plan was tuned (Plan::tuned_on): plan_machine_mismatch says in one line when the
// thread count or the machine differs from this run's, since measured choices hold only there.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/error.h"
#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

// Throws UserError(file, "partitions[i].backend" | "partitions[i].nodes", ...) as above; returns the
// notes for nodes allowed to fall back.
std::vector<std::string> check_plan_backends(const Plan& plan, const Graph& graph, const std::string& file,
                                             bool allow_fallback);

// "PLAN was tuned at 4 threads on MACHINE; this run uses 1 thread on MACHINE': ..." or nullopt when
// the plan records nothing or both agree. Its advice mentions the `threads` option, for each front
// end to spell its own way (error.h: the CLI's --threads).
std::optional<ErrorText> plan_machine_mismatch(const Plan& plan, int threads, const std::string& file);

}  // namespace tessera
