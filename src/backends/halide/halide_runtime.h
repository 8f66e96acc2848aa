// The Halide runtime shared by every compiled pipeline of the process, and its thread pool.
//
// Pipelines are compiled ahead of time without a runtime of their own (Target::NoRuntime): their
// calls to halide_malloc, halide_do_par_for, halide_error ... resolve, when the pipeline's shared
// object is dlopen'ed, against one standalone runtime loaded first with RTLD_GLOBAL. So the process
// has one Halide thread pool, whatever the number of pipelines, and one place to size it.
//
//   runtime_dir/runtime-<target hash>.so   compile_standalone_runtime + the system linker, built
//                                          once per cache directory and target (~3 s), then only
//                                          loaded
//
// Threads: set_threads(n) is what set_compute_threads (backend_compiler.h) calls for Halide. It
// records n, and calls the runtime's halide_set_num_threads now if the runtime is loaded, else
// when it loads. (libHalide's own JIT runtime, JITSharedRuntime, is not used: nothing is JIT-run.)
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace tessera::halide {

// Loads (building it first if absent) the runtime for `target` (a Halide target string) from
// `dir`. Idempotent and thread-safe; throws KernelUnsupported if it cannot be built or loaded.
void ensure_runtime(const std::filesystem::path& dir, const std::string& target);

// Halide's worker count for every pipeline of the process (>= 1).
void set_threads(int threads);

// Builds the shared object `so` and puts it in place atomically: `emit_object(obj)` writes one
// object file (Halide's compile_to_object, compile_standalone_runtime), the system linker makes a
// temporary .so beside `so`, and rename() publishes it, so a reader sees the whole file or none.
// The temporary .o and .so are removed on success and on every error. A Halide::Error from
// emit_object (or from the Lowering it runs) becomes KernelUnsupported(error_prefix + what());
// a failed link is KernelUnsupported with the linker's exit status; anything else propagates.
void publish_shared_object(const std::filesystem::path& so,
                           const std::function<void(const std::filesystem::path& obj)>& emit_object,
                           const std::string& error_prefix);

}  // namespace tessera::halide
