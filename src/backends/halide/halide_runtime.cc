// The shared Halide runtime and its thread count (see halide_runtime.h).
#include "backends/halide/halide_runtime.h"

#include <Halide.h>
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "backends/kernel.h"
#include "ir/structural_hash.h"

extern char** environ;

#ifndef TESSERA_HALIDE_LINKER
#define TESSERA_HALIDE_LINKER "cc"
#endif

namespace tessera::halide {
namespace {

std::mutex runtime_mutex;
void* runtime_handle = nullptr;
int threads_wanted = 0;   // 0: Halide's default (HL_NUM_THREADS or the core count)

void apply_threads() {
  if (!runtime_handle || threads_wanted < 1) return;
  using SetThreads = int (*)(int);
  auto set = reinterpret_cast<SetThreads>(dlsym(runtime_handle, "halide_set_num_threads"));
  if (set) set(threads_wanted);
}

// A fresh temporary name beside `final_path` (same directory, so rename() is atomic).
std::filesystem::path temp_path_beside(const std::filesystem::path& final_path, const std::string& ext) {
  static std::atomic<uint64_t> counter{0};
  return final_path.parent_path() / (".tmp-" + final_path.stem().string() + "-" + std::to_string(getpid()) + "-" +
                                     std::to_string(counter++) + ext);
}

// Links object files into a shared object `so` with the system compiler driver (no shell).
void link_shared_object(const std::vector<std::filesystem::path>& objects, const std::filesystem::path& so) {
  std::vector<std::string> args{TESSERA_HALIDE_LINKER, "-shared", "-o", so.string()};
  for (const auto& o : objects) args.push_back(o.string());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0)
    throw KernelUnsupported(std::string("halide: cannot start the linker ") + TESSERA_HALIDE_LINKER);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw KernelUnsupported(std::string("halide: linking ") + so.string() + " failed (" + TESSERA_HALIDE_LINKER +
                            " exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
}

}  // namespace

void publish_shared_object(const std::filesystem::path& so,
                           const std::function<void(const std::filesystem::path& obj)>& emit_object,
                           const std::string& error_prefix) {
  const auto obj = temp_path_beside(so, ".o"), tmp = temp_path_beside(so, ".so");
  auto remove_temporaries = [&] {
    std::error_code ec;   // best effort: the error being reported matters more
    std::filesystem::remove(obj, ec);
    std::filesystem::remove(tmp, ec);
  };
  try {
    emit_object(obj);
    link_shared_object({obj}, tmp);
    std::filesystem::rename(tmp, so);
  } catch (const Halide::Error& e) {
    remove_temporaries();
    throw KernelUnsupported(error_prefix + e.what());
  } catch (...) {
    remove_temporaries();
    throw;
  }
  remove_temporaries();   // the object file; the .so has been renamed
}

void ensure_runtime(const std::filesystem::path& dir, const std::string& target) {
  std::lock_guard lock(runtime_mutex);
  if (runtime_handle) return;
  const std::filesystem::path so = dir / ("runtime-" + hash_hex(fnv1a64(target)) + ".so");
  if (!std::filesystem::exists(so)) {
    std::filesystem::create_directories(dir);
    publish_shared_object(
        so, [&](const std::filesystem::path& obj) { Halide::compile_standalone_runtime(obj.string(), Halide::Target(target)); },
        "halide: building the runtime failed: ");
  }
  runtime_handle = dlopen(so.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!runtime_handle) throw KernelUnsupported(std::string("halide: cannot load its runtime: ") + dlerror());
  apply_threads();
}

void set_threads(int threads) {
  std::lock_guard lock(runtime_mutex);
  threads_wanted = threads;
  apply_threads();
}

}  // namespace tessera::halide
