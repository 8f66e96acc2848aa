// test_sleep: a TEST-ONLY backend whose every measurement takes a fixed time, for simulating
// distributed tuning (tessera tune --mpi) without real kernels: docs/benchmarks.md ("Distributed
// tuning") and tests/distributed/.
//
// It exists only while the environment variable TESSERA_TEST_SLEEP_MS is set (a number of
// milliseconds): compile() sleeps that long, run() does nothing (its outputs are garbage). So a
// measurement costs TESSERA_TEST_SLEEP_MS plus the fork and the timing loop's runs of an empty
// function (~1 ms), and uses no CPU while it sleeps: K ranks on a 2-core machine measure K at a
// time, as K hosts would. Never use it for a plan you run; `tessera run` does not know it.
//
// Its partition rule comes from a spec file (tests/inputs/distributed/test_sleep.json: every op,
// one node per candidate); only the measured cost model knows its compiler, through
// make_measure_compiler, which every other name passes to make_backend_compiler.
#pragma once

#include <memory>
#include <string>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

// "test_sleep" (when TESSERA_TEST_SLEEP_MS is set) or a built-in real backend's compiler.
// Throws UserError for anything else, as make_backend_compiler does.
std::unique_ptr<BackendCompiler> make_measure_compiler(const std::string& name);

}  // namespace tessera
