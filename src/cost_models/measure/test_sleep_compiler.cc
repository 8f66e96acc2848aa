// The test-only test_sleep backend (see test_sleep_compiler.h).
#include "cost_models/measure/test_sleep_compiler.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "tessera/error.h"

namespace tessera {
namespace {

std::optional<double> sleep_ms_from_env() {
  const char* text = std::getenv("TESSERA_TEST_SLEEP_MS");
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  double ms = std::strtod(text, &end);
  if (*end != '\0' || !(ms >= 0))
    throw UserError("TESSERA_TEST_SLEEP_MS", text, "not a non-negative number of milliseconds");
  return ms;
}

class SleepFunction final : public CompiledFunction {
 public:
  explicit SleepFunction(const Graph& fn) : CompiledFunction(fn) {}
  size_t workspace_bytes() const override { return 0; }

 protected:
  void run_impl(std::span<const ConstTensorView>, std::span<const TensorView>) override {}
};

class SleepCompiler final : public BackendCompiler {
 public:
  explicit SleepCompiler(double ms) : ms_(ms) {}
  std::string name() const override { return "test_sleep"; }
  std::string version() const override { return "test_sleep 1"; }

 protected:
  std::unique_ptr<CompiledFunction> compile_impl(const Graph& fn) const override {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms_));
    return std::make_unique<SleepFunction>(fn);
  }

 private:
  double ms_;
};

}  // namespace

std::unique_ptr<BackendCompiler> make_measure_compiler(const std::string& name) {
  if (name == "test_sleep") {
    if (std::optional<double> ms = sleep_ms_from_env()) return std::make_unique<SleepCompiler>(*ms);
  }
  return make_backend_compiler(name);
}

}  // namespace tessera
