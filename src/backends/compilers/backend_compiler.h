// BackendCompiler: turns an outlined function into an executable for one real backend.
//
// The unit of compilation is a *function*: a standalone Graph as extract_function() builds it
// (sub_graph.h). Its inputs are the partition's activations and its weight parameters, in
// Graph::inputs order; small constants (shapes, Clip bounds, scalar operands) are carried inside
// as constants with data. A compiler looks at the whole function once and builds everything a
// run needs (kernel lookups, oneDNN primitives, fused epilogues, intermediate buffers), so a run
// only moves data:
//
//   fn(x, W, B) { Conv(x, W, B) ─▶ Relu } -> y
//     compile(fn)  ─▶ CompiledFunction   (onednn: one conv primitive with a relu post-op)
//     run({x, W, B}, {y})                (caller-allocated y; intermediates owned by the function)
//
// Contract
// - compile() throws KernelUnsupported (kernel.h) when the backend cannot take the function: an
//   op it lacks, an attribute value or dtype it does not implement, a fusion it cannot express.
//   The message names the node and the reason; a measured cost becomes Invalid with it. A backend
//   never falls back to another backend's kernels inside its own function.
// - run() takes inputs in fn.inputs order and outputs in fn.outputs order, with exactly the types
//   the function declares (KernelError otherwise). Output buffers are the caller's; intermediate
//   buffers belong to the CompiledFunction, which is why run() is not const and one
//   CompiledFunction must not run on two threads at once (compile one per thread instead).
// - Weights arrive as inputs on every run. A backend that wants them in another layout (oneDNN's
//   blocked weights) may reorder them on a run and cache the result keyed by the input pointer;
//   callers that change weight *contents* behind the same pointer must recompile, or say so at
//   compile time: an input marked varying (BoundaryLayouts::varying_inputs; codegen marks a
//   parameter that some call site feeds with a value computed from the model's inputs) is read
//   anew on every run, nothing derived from it kept (onednn reorders it again, xnnpack makes its
//   runtime anew).
// - Boundary layouts (boundary_layout.h): compile(fn, layouts) asks for the function's 4-D
//   activations in another memory order at its boundary (NHWC); the run's buffers then hold that
//   order, while the views keep the logical NCHW types. Only a backend whose native_layout() is
//   that layout accepts it (KernelUnsupported otherwise); no layouts = all plain, which every
//   backend takes. The compiled function keeps the layouts it was built for (layouts()).
// - Half precision: a backend that computes in f32 takes an f16/bf16 function as f32, with
//   conversions at its boundary (widens_half(); src/backends/compilers/half_widening.h).
// - A function's constants without data (a shape-only model) are filled with the seeded random
//   values of HostTensor::random for float types; other data-less constants are unsupported.
//
// Threads: compute libraries keep process-wide thread pools (OpenMP for oneDNN, OpenBLAS's own
// pool, TBB). set_compute_threads() sets all of them at once, so one `--threads T` means T
// everywhere and nothing is oversubscribed. It is the one deliberately global setting: the
// libraries themselves are global. Call it from the thread that will run compiled functions.
//
// OpenBLAS picks its kernels from CPUID when it loads; on CPUs newer than its tables (generic
// "Intel Xeon Processor" VMs) it falls back to slow generic kernels. The blas backend therefore
// sets OPENBLAS_CORETYPE=SkylakeX when the CPU has AVX-512 and the variable is unset, as early as
// the process allows (see src/backends/blas/README.md for how and its limits).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/boundary_layout.h"
#include "tessera/graph.h"
#include "backends/kernel.h"

namespace tessera {

struct BackendRegistration;   // backend_registration.h

// An executable function: built once by BackendCompiler::compile, run many times.
class CompiledFunction {
 public:
  virtual ~CompiledFunction() = default;
  CompiledFunction(const CompiledFunction&) = delete;
  CompiledFunction& operator=(const CompiledFunction&) = delete;

  // Checks arity and types against the function's signature (KernelError), then runs.
  void run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs);

  const std::vector<TensorType>& input_types() const { return input_types_; }
  const std::vector<TensorType>& output_types() const { return output_types_; }
  // Bytes of intermediate buffers (and cached reordered weights) this function owns.
  virtual size_t workspace_bytes() const = 0;
  // The memory order of each input and output at the boundary (all plain unless compiled for
  // others); sized like input_types() / output_types().
  const BoundaryLayouts& layouts() const { return layouts_; }

 protected:
  // Records fn's signature (the types of fn.inputs and fn.outputs).
  explicit CompiledFunction(const Graph& fn);
  // Inputs and outputs are already checked.
  virtual void run_impl(std::span<const ConstTensorView> inputs,
                        std::span<const TensorView> outputs) = 0;
  // Whether the library runs on threads of its own (XNNPACK's pthreadpool, Halide's pool,
  // OpenBLAS's threads) rather than OpenMP's team: run() then parks OpenMP's team around
  // run_impl, so its spinning workers leave the cores to the library's (openmp_park.h).
  virtual bool runs_on_own_threads() const { return false; }

 private:
  friend class BackendCompiler;   // sets layouts_ after compile_impl
  std::vector<TensorType> input_types_, output_types_;
  BoundaryLayouts layouts_;
};

// One real backend's compiler. Stateless apart from library handles: compile() is thread-safe.
class BackendCompiler {
 public:
  virtual ~BackendCompiler() = default;

  // The backend's name as in --backends: "ref", "onednn", "eigen", "blas".
  virtual std::string name() const = 0;
  // The compiler and library versions ("tessera-onednn 1; oneDNN 2.6.3"): part of a measured
  // cost's key, so a library upgrade invalidates old measurements.
  virtual std::string version() const = 0;
  // The arithmetic it computes in, from its registration: "f32" for exact-as-fp32 backends; a
  // precision variant says what it rounds to ("bf16" for onednn_bf16); "f32" for a compiler
  // without one (a test's). Measurements of a variant also measure its error against ref, and an
  // accuracy budget (src/search/accuracy_budget.h) limits its use.
  std::string precision() const;
  // Whether it takes f16/bf16 functions by computing them in f32: compile() then builds the f32
  // function and converts parameters and results on each call (src/backends/compilers/
  // half_widening.h), so the conversions are part of what a measurement times. True for every
  // built-in backend but ref, whose kernels run f16/bf16 nodes themselves. Its spec says the same:
  // "dtypes" lists f16 and bf16 (backend_spec.h).
  virtual bool widens_half() const { return true; }

  // The boundary layout of its 4-D activations when it chooses: its registration's spec's
  // "boundary_layout" (nhwc for onednn and xnnpack), the one place that fact is written; plain for
  // a compiler without a registration (a test's).
  Layout native_layout() const;
  // The registration it was made from (make_backend_compiler), or nullptr (a test's compiler, or
  // one made by a backend's own factory).
  const BackendRegistration* registration() const { return registration_; }
  // Compiles `fn` with its boundary in `layouts` (empty: all plain); throws KernelUnsupported when
  // this backend cannot take it (see header), first for a node whose op is not in its
  // registration's op table. UserError-free: a layouts vector of the wrong size or a non-plain
  // layout on a value that is not layout-sensitive is a KernelError.
  std::unique_ptr<CompiledFunction> compile(const Graph& fn, const BoundaryLayouts& layouts = {}) const;

 protected:
  virtual std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const = 0;
  // Backends whose native_layout() is not plain override this one; the default takes all-plain
  // layouts only (and calls compile_impl(fn)).
  virtual std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn, const BoundaryLayouts& layouts) const;

 private:
  friend std::unique_ptr<BackendCompiler> make_backend_compiler(const std::string& name);
  const BackendRegistration* registration_ = nullptr;
};

// The compiler of a registered real backend (backend_registration.h), carrying its registration.
// Throws UserError for any other name. (Library tessera_compilers, src/backends/compilers/.)
std::unique_ptr<BackendCompiler> make_backend_compiler(const std::string& name);
// The names make_backend_compiler accepts: the registered backends, sorted.
std::vector<std::string> backend_compiler_names();

// Sets the thread count of OpenMP (and so oneDNN), OpenBLAS, XNNPACK's pthreadpool and TBB (a global_control held until
// the next call) to `threads` (>= 1). compute_threads() returns the last value set, or the
// OpenMP default before any call.
void set_compute_threads(int threads);
int compute_threads();

// set_compute_threads(threads) for a scope; the count before it comes back when the scope ends.
class ScopedComputeThreads {
 public:
  explicit ScopedComputeThreads(int threads) : before_(compute_threads()) { set_compute_threads(threads); }
  ~ScopedComputeThreads() { set_compute_threads(before_); }
  ScopedComputeThreads(const ScopedComputeThreads&) = delete;
  ScopedComputeThreads& operator=(const ScopedComputeThreads&) = delete;

 private:
  int before_;
};

}  // namespace tessera
