// set_compute_threads: one thread count for every compute library (see tessera/backend_compiler.h).
//
// oneDNN (Debian's build uses OpenMP) and Eigen follow omp_set_num_threads; OpenBLAS (pthread
// build) keeps its own pool; XNNPACK's runtimes take a pthreadpool of the count set here
// (src/backends/xnnpack/xnnpack_threadpool.h); TBB is capped by a global_control, which only holds
// while the object lives, so the last one set is kept here. Halide pipelines share one runtime
// whose pool is sized by halide_set_num_threads (backends/halide/halide_runtime.h). The libraries'
// state is process-wide already; this file only keeps them in step. The pools still take turns
// on the same cores: a function on threads of its own runs with OpenMP's team parked
// (openmp_park.h), and XNNPACK's workers are sent to sleep after each call (xnnpack_threadpool.h).
#include <omp.h>

#include <memory>
#include <mutex>
#include <stdexcept>

#include <tbb/global_control.h>

#include "backends/xnnpack/xnnpack_threadpool.h"
#include "backends/halide/halide_runtime.h"
#include "backends/compilers/backend_compiler.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace tessera {
namespace {

std::mutex threads_mutex;
std::unique_ptr<tbb::global_control> tbb_control;
int threads_set = 0;

}  // namespace

void set_compute_threads(int threads) {
  if (threads < 1) throw std::invalid_argument("set_compute_threads: threads must be >= 1");
  std::lock_guard lock(threads_mutex);
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  xnnpack::set_threads(threads);
  tbb_control.reset();
  tbb_control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      static_cast<size_t>(threads));
  halide::set_threads(threads);
  threads_set = threads;
}

int compute_threads() {
  std::lock_guard lock(threads_mutex);
  return threads_set > 0 ? threads_set : omp_get_max_threads();
}

}  // namespace tessera
