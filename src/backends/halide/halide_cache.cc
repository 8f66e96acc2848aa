// The compiled-pipeline cache (see halide_cache.h).
#include "backends/halide/halide_cache.h"

#include <dlfcn.h>

#include <cstdlib>

#include "backends/kernel.h"
#include "ir/structural_hash.h"

namespace tessera::halide {

std::filesystem::path cache_dir() {
  if (const char* dir = std::getenv("TESSERA_HALIDE_CACHE"); dir && *dir) return dir;
  // Beside default_cost_database_path() (cost_database.h), which this library does not link.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "tessera" / "halide";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".cache" / "tessera" / "halide";
}

std::filesystem::path cache_path(const std::filesystem::path& dir, const Graph& fn, const std::string& config) {
  // Constants that structural_hash counts by type only (weights) are baked into the code here,
  // and data-less float constants get values seeded by their value id: both join the key.
  uint64_t extra = fnv1a64(config);
  for (size_t v = 0; v < fn.values.size(); ++v) {
    const Value& val = fn.values[v];
    if (!val.is_constant()) continue;
    if (val.data) {
      extra = fnv1a64(std::string_view(reinterpret_cast<const char*>(val.data->data()), val.data->size()), extra);
    } else {
      const std::string id = "random@" + std::to_string(v);
      extra = fnv1a64(id, extra);
    }
  }
  return dir / (hash_hex(structural_hash(fn)) + "-" + hash_hex(extra) + ".so");
}

PipelineObject::PipelineObject(const std::filesystem::path& so) {
  handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw KernelUnsupported(std::string("halide: cannot load ") + so.string() + ": " + dlerror());
  entry_ = reinterpret_cast<Entry>(dlsym(handle_, (std::string(kEntryPoint) + "_argv").c_str()));
  if (!entry_) {
    dlclose(handle_);
    throw KernelUnsupported("halide: " + so.string() + " has no entry point " + kEntryPoint + "_argv");
  }
}

PipelineObject::~PipelineObject() {
  if (handle_) dlclose(handle_);
}

}  // namespace tessera::halide
