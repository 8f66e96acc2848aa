// A BackendCompiler for tests that misbehaves on purpose: it throws at compile time, aborts,
// segfaults or hangs at run time, or runs (doing nothing) like a well-behaved backend. Tests
// inject it through MeasureOptions::make_compiler, named by the backend: "fake_ok", "fake_throw",
// "fake_abort", "fake_segv", "fake_hang", "fake_wait", whose every run waits 5 ms without using the
// CPU (as a run on a loaded core waits for it), and "fake_exclusive", which runs like fake_ok and counts
// overlapping measurements: from its first run until its (isolated) process ends it holds
// flock(LOCK_EX) on $TESSERA_FAKE_OVERLAP_DIR/lock; finding the lock taken, it first appends a
// line to $TESSERA_FAKE_OVERLAP_DIR/overlaps.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "backends/compilers/backend_compiler.h"
#include "tessera/error.h"

namespace tessera::test {

class FakeFunction final : public CompiledFunction {
 public:
  FakeFunction(const Graph& fn, std::string mode) : CompiledFunction(fn), mode_(std::move(mode)) {}
  size_t workspace_bytes() const override { return 0; }

 protected:
  void run_impl(std::span<const ConstTensorView>, std::span<const TensorView>) override {
    if (mode_ == "fake_abort") std::abort();
    if (mode_ == "fake_segv") std::raise(SIGSEGV);
    if (mode_ == "fake_hang") for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    if (mode_ == "fake_wait") std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (mode_ == "fake_exclusive" && lock_fd_ < 0) take_lock();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

 private:
  void take_lock() {
    const char* dir = std::getenv("TESSERA_FAKE_OVERLAP_DIR");
    if (dir == nullptr) std::abort();
    lock_fd_ = ::open((std::string(dir) + "/lock").c_str(), O_RDWR | O_CREAT, 0644);
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) == 0) return;
    int log = ::open((std::string(dir) + "/overlaps").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    (void)!::write(log, "overlap\n", 8);
    ::close(log);
    ::flock(lock_fd_, LOCK_EX);
  }

  std::string mode_;
  int lock_fd_ = -1;   // released when the measuring process exits
};

class FakeCompiler final : public BackendCompiler {
 public:
  explicit FakeCompiler(std::string mode) : mode_(std::move(mode)) {}
  std::string name() const override { return mode_; }
  std::string version() const override { return "fake 1"; }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override {
    if (mode_ == "fake_throw") throw KernelUnsupported("fake_throw: node '" + fn.name + "': not today");
    return std::make_unique<FakeFunction>(fn, mode_);
  }

 private:
  std::string mode_;
};

// Fakes by name; every other name goes to the real backends.
inline std::unique_ptr<BackendCompiler> make_fake_or_real(const std::string& name) {
  if (name.rfind("fake_", 0) == 0) return std::make_unique<FakeCompiler>(name);
  return make_backend_compiler(name);
}

}  // namespace tessera::test
