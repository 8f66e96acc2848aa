// The `blas` backend's compiler: MatMul and Gemm through OpenBLAS cblas_sgemm, with the bias
// folded into the GEMM's beta*C.
//
//   fn(x, W, b) { MatMul(x, W) ─▶ Add(., b) } -> y
//     compile:  one GEMM step; its epilogue = [b broadcast to y]; MatMul's own output not stored
//     run:      y = broadcast(b); sgemm(x, W, beta = 1, C = y)     (one pass over y, no Add pass)
//
// A function may hold several GEMMs (a coalesced partition); each Add that consumes a GEMM's only
// use, with the other operand available before that GEMM runs, folds into it. Gemm's own C and
// beta fold the same way. Anything else in the function is KernelUnsupported: blas runs GEMMs only.
#pragma once

#include <memory>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

std::unique_ptr<BackendCompiler> make_blas_compiler();

// Sets OPENBLAS_CORETYPE=SkylakeX when the CPU has AVX-512F and the variable is unset, and makes
// OpenBLAS re-pick its kernels (see README.md). Runs once, at static initialization of this
// library; later calls are no-ops. Returns the core name OpenBLAS uses.
const char* ensure_openblas_coretype();

// Sets OPENBLAS_THREAD_TIMEOUT to its minimum when neither it nor GOTO_THREAD_TIMEOUT is set, so
// OpenBLAS's workers sleep right after a call instead of spinning on cores other libraries' threads
// need, and restarts OpenBLAS's pool to take it (see README.md). Runs once, at static
// initialization; returns the timeout OpenBLAS reads (log2 of its spin cycles).
int ensure_openblas_short_spin();

}  // namespace tessera
