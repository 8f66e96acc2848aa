// blas compiled functions against ref: sgemm for MatMul/Gemm with the bias folded in.
#include "backends/compilers/function_builder.h"
#include "backends/blas/blas_compiler.h"

#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <optional>

#include "support/files.h"
#include "support/subprocess.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;

TEST_CASE("blas: batched MatMul with broadcast batch dims") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {2, 1, 5, 7}), w = b.input("w", {3, 7, 4});
  b.output(b.node("MatMul", {a, w}, {2, 3, 5, 4}));
  check_against_ref("blas", b.g);
}

TEST_CASE("blas: Gemm with transA/transB, alpha, beta and C") {
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1}) {
      FunctionBuilder b;
      const ValueId A = b.input("A", ta ? Shape{9, 6} : Shape{6, 9}), B = b.input("B", tb ? Shape{5, 9} : Shape{9, 5});
      const ValueId C = b.input("C", {5});
      b.output(b.node("Gemm", {A, B, C}, {6, 5}, {{"transA", ta}, {"transB", tb}, {"alpha", 1.5}, {"beta", 0.5}}));
      check_against_ref("blas", b.g);
    }
}

TEST_CASE("blas: MatMul + constant bias Add folds into one GEMM (no intermediate buffer)") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {128, 64}), w = b.input("w", {64, 32});
  std::vector<float> bias(32);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * static_cast<float>(i);
  const ValueId bc = b.constant<float>("bias", DType::f32, {32}, bias);
  const ValueId m = b.node("MatMul", {a, w}, {128, 32});
  b.output(b.node("Add", {bc, m}, {128, 32}));
  check_against_ref("blas", b.g);
  auto fn = make_backend_compiler("blas")->compile(b.g);
  CHECK(fn->workspace_bytes() == 32 * sizeof(float));   // the constant only
}

TEST_CASE("blas: two chained GEMMs, the second reading the first's folded result") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {4, 8}), w1 = b.input("w1", {8, 8}), b1 = b.input("b1", {8}), w2 = b.input("w2", {8, 3});
  const ValueId h = b.node("Add", {b.node("MatMul", {a, w1}, {4, 8}), b1}, {4, 8});
  b.output(b.node("MatMul", {h, w2}, {4, 3}));
  check_against_ref("blas", b.g);
}

TEST_CASE("blas: anything but GEMMs and folded bias Adds is KernelUnsupported") {
  FunctionBuilder b;
  const ValueId a = b.input("a", {4, 8}), w = b.input("w", {8, 3});
  b.output(b.node("Relu", {b.node("MatMul", {a, w}, {4, 3})}, {4, 3}));
  CHECK_THROWS_AS(make_backend_compiler("blas")->compile(b.g), KernelUnsupported);
}

namespace {
// A variable as this process was started with: /proc/self/environ keeps the environment given to
// exec, which the startup setenv() of ensure_openblas_coretype (and _short_spin) does not rewrite.
std::optional<std::string> initial_env(const std::string& name) {
  const std::string env = tessera::testing::read_file("/proc/self/environ");
  const std::string key = name + "=";
  for (size_t at = 0; at < env.size(); at = env.find('\0', at) + 1) {
    if (env.compare(at, key.size(), key) == 0) return env.substr(at + key.size(), env.find('\0', at) - at - key.size());
    if (env.find('\0', at) == std::string::npos) break;
  }
  return std::nullopt;
}

// Runs the hidden case tagged `tag` of this same test binary once per environment prefix (an
// `env ...` command); each run must pass exactly that one case.
void run_child_case(const std::string& tag, std::initializer_list<const char*> envs) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  for (const std::string env : envs) {
    tessera::testing::Process child = tessera::testing::run_command(env + " " + self + " '" + tag + "'");
    INFO(env << ": " << child.out << child.err);
    CHECK(child.exit_code == 0);
    CHECK(child.out.find("All tests passed") != std::string::npos);
    CHECK(child.out.find("1 test case") != std::string::npos);
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

// The check itself, in a child of the case below started with a chosen environment: the core
// OpenBLAS runs on, and the one the compiler's version (a cost database key) names.
TEST_CASE("blas: (child of the case below) the core type follows OPENBLAS_CORETYPE or the CPU", "[.coretype-child]") {
  const std::string core = ensure_openblas_coretype();
  INFO("core " << core);
  const std::optional<std::string> told = initial_env("OPENBLAS_CORETYPE");
  if (told) CHECK(lower(core) == lower(*told));
  else if (__builtin_cpu_supports("avx512f")) CHECK(core == std::string("SkylakeX"));
  else CHECK(core != std::string("SkylakeX"));
  CHECK(make_backend_compiler("blas")->version().find("core " + core) != std::string::npos);
}

TEST_CASE("blas: OpenBLAS uses SkylakeX kernels on AVX-512 CPUs unless OPENBLAS_CORETYPE says otherwise") {
  // Both branches, whatever this process was started with (CI machines may set the variable): this
  // same test binary runs the case above once without the variable and once told Haswell.
  run_child_case("[.coretype-child]", {"env -u OPENBLAS_CORETYPE", "env OPENBLAS_CORETYPE=Haswell"});
}

// In a child started with a chosen environment: the spin OpenBLAS's pool was restarted with, and a
// GEMM large enough for OpenBLAS to split across 2 threads still right on the restarted pool.
TEST_CASE("blas: (child of the case below) OpenBLAS's workers spin 2^4 cycles unless told", "[.spin-child]") {
  const std::optional<std::string> told = initial_env("OPENBLAS_THREAD_TIMEOUT");
  CHECK(ensure_openblas_short_spin() == (told ? std::stoi(*told) : 4));
  set_compute_threads(2);
  FunctionBuilder b;
  const ValueId a = b.input("a", {96, 256}), w = b.input("w", {256, 192});
  b.output(b.node("MatMul", {a, w}, {96, 192}));
  check_against_ref("blas", b.g);
  set_compute_threads(1);
}

TEST_CASE("blas: OpenBLAS's workers sleep right after a call unless OPENBLAS_THREAD_TIMEOUT says otherwise") {
  run_child_case("[.spin-child]", {"env -u OPENBLAS_THREAD_TIMEOUT -u GOTO_THREAD_TIMEOUT", "env OPENBLAS_THREAD_TIMEOUT=9"});
}
