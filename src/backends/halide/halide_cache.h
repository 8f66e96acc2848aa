// The on-disk cache of compiled pipelines: one shared object per (function identity, target,
// compiler configuration), so `tune` and later `run`s never compile a function twice.
//
//   key   = structural_hash(fn) (tessera/structural_hash.h), plus what it leaves out but the code
//           bakes in (the bytes of constants that count by type only), the Halide target string,
//           the compiler version and autoscheduler with its machine parameters
//   file  = <cache dir>/<structural hash>-<hash of the rest>.so
//   store = compile_to_object into a temporary file, link it into a temporary .so with the system
//           compiler driver, rename() over the final name: a reader sees a whole file or none,
//           and two processes compiling the same function race harmlessly (last rename wins,
//           both files are equal)
//   load  = dlopen(RTLD_NOW | RTLD_LOCAL) after the shared runtime (halide_runtime.h); the entry
//           point is Halide's argv wrapper, `tessera_halide_fn_argv(void** args)`
//
// The cache directory is TESSERA_HALIDE_CACHE if set, else `halide/` beside the default cost
// database ($XDG_CACHE_HOME/tessera/halide or ~/.cache/tessera/halide). Nothing is ever evicted:
// entries are small (tens of KiB) and a stale one (older compiler version) is simply never named.
// A hash collision between two different functions would load the wrong code; the 128 bits of
// the two hashes make that as unlikely as the cost database's own keys.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "tessera/graph.h"

namespace tessera::halide {

inline constexpr const char* kEntryPoint = "tessera_halide_fn";

std::filesystem::path cache_dir();

// The cache file for `fn` compiled with `config` (target, version, scheduler: any text).
std::filesystem::path cache_path(const std::filesystem::path& dir, const Graph& fn, const std::string& config);

// A loaded compiled pipeline. Calls are thread-safe (Halide pipelines keep no state).
class PipelineObject {
 public:
  using Entry = int (*)(void** args);
  // dlopens `so`; throws KernelUnsupported when it cannot be loaded.
  explicit PipelineObject(const std::filesystem::path& so);
  ~PipelineObject();
  PipelineObject(const PipelineObject&) = delete;
  PipelineObject& operator=(const PipelineObject&) = delete;
  int call(void** args) const { return entry_(args); }

 private:
  void* handle_ = nullptr;
  Entry entry_ = nullptr;
};

}  // namespace tessera::halide
