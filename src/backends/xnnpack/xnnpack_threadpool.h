// XNNPACK's process-wide state: the library's one-time initialisation and its thread pool.
//
// XNNPACK parallelises through a pthreadpool handed to each runtime when it is created; the pool's
// size is fixed when the pool is made. set_compute_threads(T) (backend_compiler.h) calls
// set_threads(T), and threadpool() then returns a pool of T threads (the caller's thread
// included; T = 1 is no pool: XNNPACK runs on the caller's thread). A runtime keeps the pool it
// was created with, so a compiled function compares threadpool() with its runtime's pool on every
// run and recreates the runtime when the count changed (runtimes are otherwise created once).
//
// Pools are kept for the life of the process, one per thread count asked for (a handful), so a
// runtime never outlives its pool. Before any set_threads call the count is the machine's
// hardware concurrency, as OpenMP's default is. A forked child (tune measures in children)
// forgets the parent's pools, whose threads it does not have, and makes its own.
#pragma once

#include <pthreadpool.h>

namespace tessera::xnnpack {

// xnn_initialize once per process; throws KernelUnsupported when XNNPACK refuses this CPU.
void initialize();
// The thread count XNNPACK's runtimes use from now on (>= 1).
void set_threads(int threads);
// The pool for the current thread count; nullptr for one thread.
pthreadpool_t threadpool();
// Sends `pool`'s workers to sleep now. After a parallel call pthreadpool's workers spin for the
// next one; when the next call is another library's (oneDNN's OpenMP team), they would take its
// cores. XNN_FLAG_YIELD_WORKERS on the runtime does not reach the workers in this snapshot
// (perf showed them spinning through the oneDNN calls after it), so a no-op task is dispatched
// with PTHREADPOOL_FLAG_YIELD_WORKERS: the workers run it and then sleep on a futex. Microseconds;
// nothing for a null pool.
void yield_workers(pthreadpool_t pool);

}  // namespace tessera::xnnpack
