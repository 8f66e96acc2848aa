// OpenBLAS's workers go to sleep right after a call (see README.md, "Worker spin").
//
// Debian's OpenBLAS (pthread build) keeps a pool of worker threads. After each parallel call a
// worker spins for `thread_timeout` CPU cycles (2^28 by default, a tenth of a second) waiting for
// the next one, and only then sleeps on a condition variable. In a plan that mixes backends the
// next call is oneDNN's, whose OpenMP team wants the very core the spinning worker holds. The
// timeout is read from OPENBLAS_THREAD_TIMEOUT (log2 of the cycles, clamped to [4, 30]) when the
// pool starts, which is in OpenBLAS's library constructor, before any code of ours. So, at static
// initialization and before any BLAS call, this sets the variable to its minimum when the user has
// not set it (or GOTO_THREAD_TIMEOUT), re-reads OpenBLAS's environment and shuts the pool down;
// OpenBLAS starts it again, with the new timeout, at its next parallel call (the same lazy restart
// it does after fork()). A value the user set is kept.
#include <cstdlib>
#include <mutex>

#include "backends/blas/blas_compiler.h"

extern "C" {
void openblas_read_env(void);
int openblas_thread_timeout(void);
int blas_thread_shutdown_(void);
}

namespace tessera {

int ensure_openblas_short_spin() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("OPENBLAS_THREAD_TIMEOUT") != nullptr || std::getenv("GOTO_THREAD_TIMEOUT") != nullptr) return;
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
    openblas_read_env();
    blas_thread_shutdown_();
  });
  return openblas_thread_timeout();
}

namespace {
[[maybe_unused]] const int spin_at_startup = ensure_openblas_short_spin();
}  // namespace

}  // namespace tessera
