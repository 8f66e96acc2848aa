// XNNPACK's initialisation and thread pools (see xnnpack_threadpool.h).
#include "backends/xnnpack/xnnpack_threadpool.h"

#include <xnnpack.h>

#include <map>
#include <mutex>
#include <thread>

#include "tessera/kernel.h"

namespace tessera::xnnpack {
namespace {

std::mutex pool_mutex;
int threads_set = 0;                       // 0: not set, hardware concurrency
std::map<int, pthreadpool_t> pools;        // by thread count; never destroyed (see header)

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

}  // namespace tessera::xnnpack
