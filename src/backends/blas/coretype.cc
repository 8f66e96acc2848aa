// OPENBLAS_CORETYPE for CPUs newer than OpenBLAS's tables (see README.md).
//
// Debian's OpenBLAS 0.3.21 is a DYNAMIC_ARCH build: its library constructor reads CPUID, picks a
// kernel table and, on a CPU it does not know (a VM's "Intel Xeon Processor" with AVX-512), falls
// back to Prescott kernels, about 4x slower on sgemm. The constructor runs before any of our static
// initializers, so setting the variable alone is too late; OpenBLAS exports the pair that selects
// the table (gotoblas_dynamic_quit / gotoblas_dynamic_init), and re-running it here, before any
// BLAS call, re-reads OPENBLAS_CORETYPE. A variable the user set is left alone.
#include <cstdlib>
#include <mutex>

#include "backends/blas/blas_compiler.h"

extern "C" {
char* openblas_get_corename(void);
void gotoblas_dynamic_init(void);
void gotoblas_dynamic_quit(void);
}

namespace tessera {

const char* ensure_openblas_coretype() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr || !__builtin_cpu_supports("avx512f")) return;
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
  });
  return openblas_get_corename();
}

namespace {
[[maybe_unused]] const char* const coretype_at_startup = ensure_openblas_coretype();
}  // namespace

}  // namespace tessera
