// XNNPACK's initialisation and thread pools (see xnnpack_threadpool.h).
#include "backends/xnnpack/xnnpack_threadpool.h"

#include <xnnpack.h>

#include <pthread.h>

#include <map>
#include <mutex>
#include <thread>

#include "backends/kernel.h"

namespace tessera::xnnpack {
namespace {

std::mutex pool_mutex;
int threads_set = 0;                       // 0: not set, hardware concurrency
std::map<int, pthreadpool_t> pools;        // by thread count; never destroyed (see header)

// A forked child (tune's measurements) has none of the parent's worker threads: its pools would
// wait on them forever. The child forgets them (leaked, never used) and makes its own.
void lock_pools() { pool_mutex.lock(); }
void unlock_pools() { pool_mutex.unlock(); }
void forget_pools_in_child() {
  pools.clear();
  pool_mutex.unlock();
}
[[maybe_unused]] const int fork_handlers = pthread_atfork(&lock_pools, &unlock_pools, &forget_pools_in_child);

}  // namespace

void initialize() {
  static const xnn_status status = xnn_initialize(nullptr);
  if (status != xnn_status_success)
    throw KernelUnsupported("xnnpack: xnn_initialize failed (status " + std::to_string(status) + "): CPU not supported");
}

void set_threads(int threads) {
  std::lock_guard lock(pool_mutex);
  threads_set = threads < 1 ? 1 : threads;
}

pthreadpool_t threadpool() {
  std::lock_guard lock(pool_mutex);
  const int threads = threads_set > 0 ? threads_set : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (threads == 1) return nullptr;
  auto it = pools.find(threads);
  if (it == pools.end()) it = pools.emplace(threads, pthreadpool_create(static_cast<size_t>(threads))).first;
  return it->second;
}

void yield_workers(pthreadpool_t pool) {
  if (pool == nullptr) return;
  pthreadpool_parallelize_1d(pool, [](void*, size_t) {}, nullptr, pthreadpool_get_threads_count(pool), PTHREADPOOL_FLAG_YIELD_WORKERS);
}

}  // namespace tessera::xnnpack
