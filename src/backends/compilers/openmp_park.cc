// OpenMP's team parked while another library's threads run (see openmp_park.h).
#include "backends/compilers/openmp_park.h"

#include <omp.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>

namespace tessera {
namespace {

// A forked child (tune's measurements) inherits libgomp's pool without its threads: a parallel
// region there waits on them forever once the parent has had a team. The child measures one
// function, with no other library's threads to park for, so it runs its work unparked.
std::atomic<bool> in_forked_child{false};
[[maybe_unused]] const int fork_handler = pthread_atfork(nullptr, nullptr, [] { in_forked_child = true; });

}  // namespace

bool openmp_team_to_park() { return omp_get_max_threads() > 1 && !omp_in_parallel() && !in_forked_child; }

void run_with_openmp_parked(const std::function<void()>& work) {
  if (!openmp_team_to_park()) {
    work();
    return;
  }
  const int team = omp_get_max_threads();
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
#pragma omp parallel num_threads(team)
  {
    if (omp_get_thread_num() == 0) {
      try {
        work();
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        done = true;
      }
      cv.notify_all();
    } else {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return done; });
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace tessera
