// Wall or CPU time for plans (see run_clock.h).
#include "runtime/run_clock.h"

#include <time.h>

#include <chrono>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

RunClock run_clock_for_threads(int threads) { return threads <= 1 ? RunClock::cpu : RunClock::wall; }

RunClock plan_run_clock() { return run_clock_for_threads(compute_threads()); }

double run_clock_ms(RunClock clock) {
  if (clock == RunClock::cpu) {
    timespec ts{};
    if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0) return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* run_clock_name(RunClock clock) { return clock == RunClock::cpu ? "cpu" : "wall"; }

}  // namespace tessera
