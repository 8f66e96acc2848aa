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
#include <string>
#include <vector>

namespace tessera::halide {

// Loads (building it first if absent) the runtime for `target` (a Halide target string) from
// `dir`. Idempotent and thread-safe; throws KernelUnsupported if it cannot be built or loaded.
void ensure_runtime(const std::filesystem::path& dir, const std::string& target);

// Halide's worker count for every pipeline of the process (>= 1).
void set_threads(int threads);

// Links object files into a shared object `so` with the system compiler driver (no shell).
// Throws KernelUnsupported with the linker's exit status when it fails.
void link_shared_object(const std::vector<std::filesystem::path>& objects, const std::filesystem::path& so);

// A fresh temporary name beside `final_path` (same directory, so rename() is atomic).
std::filesystem::path temp_path_beside(const std::filesystem::path& final_path, const std::string& ext);

}  // namespace tessera::halide
