// OpenMP's team parked while a library with threads of its own runs.
//
// Terms. oneDNN and Eigen run on libgomp's team of worker threads. When a parallel region ends,
// the workers do not sleep at once: they spin (GOMP_SPINCOUNT, 300,000 iterations by default,
// milliseconds) waiting for the next region. XNNPACK (its pthreadpool), Halide (its runtime's
// pool) and OpenBLAS (its server threads) run on threads of their own. A call to one of those
// right after a oneDNN call shares the cores with spinning OpenMP workers: at 2 threads on 2
// cores, the library's worker waits for a time slice at every parallel step.
//
//   oneDNN fn ─▶ XNNPACK fn                   XNNPACK's worker and a spinning OpenMP worker share a core
//   oneDNN fn ─▶ park { XNNPACK fn } ─▶ ...   OpenMP's workers block on a condition variable (a futex,
//                                             no spinning) until the call returns
//
// park: a parallel region of the team's size; its thread 0 (the caller) runs the work, the others
// wait on a condition variable until it is done, then the region ends. What it costs: waking the
// team and one barrier, microseconds per call. The other direction needs nothing here: XNNPACK's
// runtimes are created with XNN_FLAG_YIELD_WORKERS, and Halide's workers sleep after a short spin.
//
// With a team of one thread, inside a parallel region already, or in a forked child (libgomp's
// pool does not survive fork()), the work just runs.
#pragma once

#include <functional>

namespace tessera {

// Whether there is a team to park here: more than one OpenMP thread, not inside a parallel
// region, not in a forked child. Callers test it first, so the one-thread path builds no
// std::function.
bool openmp_team_to_park();

// Runs `work` on the calling thread with OpenMP's other threads asleep (just runs it when
// openmp_team_to_park() is false); rethrows what it throws.
void run_with_openmp_parked(const std::function<void()>& work);

}  // namespace tessera
