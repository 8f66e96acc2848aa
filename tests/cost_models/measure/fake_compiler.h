// A BackendCompiler for tests that misbehaves on purpose: it throws at compile time, aborts,
// segfaults or hangs at run time, or runs (doing nothing) like a well-behaved backend. Tests
// inject it through MeasureOptions::make_compiler, named by the backend: "fake_ok", "fake_throw",
// "fake_abort", "fake_segv", "fake_hang".
#pragma once

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "tessera/backend_compiler.h"
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
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

 private:
  std::string mode_;
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
