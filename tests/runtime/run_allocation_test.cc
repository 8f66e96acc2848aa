// A run allocates nothing outside its kernels: the executor, its LoweredProgram and the ref
// compiler's functions build every view a call takes once, with its type, and a run only sets
// data pointers (executor.h). This binary replaces the global operator new to count allocations
// during three runs; a view built per call copies its TensorType's shape, one heap allocation per
// tensor per call (60 in the three runs below when views were built per call).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "runtime/executor.h"
#include "runtime/model_data.h"
#include "support/graph_builder.h"
#include "support/roofline_plan.h"
#include "tessera/plan.h"
#include <nlohmann/json.hpp>

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* counted(std::size_t n, std::size_t align) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) { return counted(n, 0); }
void* operator new[](std::size_t n) { return counted(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
// The nothrow forms too (std::stable_sort's temporary buffer): every form must pair with the
// deletes below, or a sanitizer's own nothrow new meets this file's free.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try { return counted(n, 0); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try { return counted(n, 0); } catch (...) { return nullptr; }
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try { return counted(n, static_cast<std::size_t>(a)); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try { return counted(n, static_cast<std::size_t>(a)); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

using namespace tessera;

// A chain of four elementwise nodes, each its own ref partition: four calls in main, each with
// views to bind, and ref kernels that allocate nothing themselves.
TEST_CASE("run: the executor's run loop allocates nothing") {
  tessera::testing::GraphBuilder b;
  ValueId v = b.input("x");
  const char* ops[] = {"Relu", "Sigmoid", "Neg", "Relu"};
  for (int i = 0; i < 4; ++i) {
    const std::string name = "n" + std::to_string(i);
    v = b.op(ops[i], name, {v});
  }
  b.output(v);
  const Graph& g = b.g;
  // ref's one-partition plan, split into one partition per node.
  nlohmann::json j = plan_to_json(tessera::testing::roofline_plan(g, "ref", "collage"), g);
  nlohmann::json one = j["partitions"][0];
  j["partitions"] = nlohmann::json::array();
  for (int i = 0; i < 4; ++i) {
    nlohmann::json p = one;
    p["nodes"] = {"n" + std::to_string(i)};
    p["candidates"] = nlohmann::json::array();
    p["function"] = "tvmgen_default_ref_main_" + std::to_string(i);
    j["partitions"].push_back(p);
  }
  const Plan plan = plan_from_json(j, "chain.json", g);
  REQUIRE(plan.partitions.size() == 4);
  Executor executor(g, plan);
  const std::vector<HostTensor> inputs = model_inputs(g, 0);
  executor.run(inputs);   // warm-up: anything lazily made on a first run
  allocations = 0;
  counting = true;
  for (int i = 0; i < 3; ++i) executor.run(inputs);
  counting = false;
  CHECK(allocations.load() == 0);
}
