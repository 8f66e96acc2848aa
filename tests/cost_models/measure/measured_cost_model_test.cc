// MeasuredCostModel: real measurements on ref, database reuse, the journal, and isolation from
// backends that throw, abort, segfault or hang.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <atomic>
#include <filesystem>
#include <unistd.h>

#include "cost_models/graph_builder.h"
#include "cost_models/measure/fake_compiler.h"
#include "support/files.h"
#include "support/temp_dir.h"
#include "tessera/error.h"
#include "cost_models/estimator.h"
#include "cost_models/measure/measured_cost_model.h"

using namespace tessera;
using namespace std::chrono_literals;

namespace {

// y = MatMul(a, b): a [16, 32], b [32, 8].
Graph matmul() {
  test::GraphBuilder b;
  ValueId a = b.input("a", {16, 32});
  ValueId w = b.input("b", {32, 8});
  b.output(b.op("MatMul", "mm", {a, w}, {16, 8}));
  b.g.name = "MatMul";
  return b.g;
}

MeasureOptions quick() {
  MeasureOptions o;
  o.budget = 2ms;
  o.max_repeats = 20;
  o.timeout = 5s;
  o.make_compiler = test::make_fake_or_real;
  o.backends = {"ref"};
  return o;
}


}  // namespace

TEST_CASE("a small MatMul on ref measures as a positive Value with samples") {
  Graph fn = matmul();
  MeasuredCostModel model(quick());
  CostEntry e = model.estimate_entry(CostRequest(fn, structural_hash(fn), "ref", "cpu", "MatMul"));
  INFO(e.cost.to_string());
  REQUIRE(e.cost.is_value());
  CHECK(e.cost.seconds() > 0.0);
  CHECK(e.samples >= 3);
  CHECK(e.samples <= 20);   // quick(): max_repeats
  CHECK(e.spread >= 0.0);
  CHECK(model.stats().measured == 1);
}

TEST_CASE("the same function twice is measured once: database and journal hits") {
  Graph fn = matmul();
  Graph copy = matmul();
  std::vector<CostRequest> reqs{CostRequest(fn, structural_hash(fn), "ref", "cpu"),
                                CostRequest(copy, structural_hash(copy), "ref", "cpu")};
  tessera::testing::TempDir dir;
  const auto path = dir / "costs.db";
  {
    auto db = CostDatabase::open(path);
    MeasuredCostModel model(quick());
    EstimateResult first = estimate_costs(model, reqs, {1, db.get()});
    CHECK(first.stats.unique == 1);
    CHECK(first.stats.estimated == 1);
    CHECK(model.stats().measured == 1);
    REQUIRE(first.costs[0].is_value());
    CHECK(first.costs[0] == first.costs[1]);
  }
  {
    // A new process would see the same: reopen, nothing measured, the stored cost comes back.
    auto db = CostDatabase::open(path);
    MeasuredCostModel model(quick());
    EstimateResult again = estimate_costs(model, reqs, {1, db.get()});
    CHECK(again.stats.cache_hits == 1);
    CHECK(again.stats.estimated == 0);
    CHECK(model.stats().measured == 0);
  }
  {
    // The journal (tessera tune) appends as it measures and answers later requests itself.
    CostDatabase journal;
    MeasureOptions o = quick();
    o.journal = &journal;
    MeasuredCostModel model(o);
    model.estimate_entry(reqs[0]);
    CHECK(journal.stats().entries == 1);
    CostEntry again = model.estimate_entry(reqs[1]);
    CHECK(model.stats().measured == 1);
    CHECK(model.stats().journal_hits == 1);
    CHECK(again == journal.entries().front().second);
  }
}

TEST_CASE("backends that throw, abort, segfault or hang are Invalid while the others measure") {
  Graph fn = matmul();
  uint64_t h = structural_hash(fn);
  std::vector<std::string> names{"fake_ok", "fake_throw", "fake_abort", "fake_hang", "fake_segv", "ref"};
  std::vector<CostRequest> reqs;
  for (const std::string& n : names) reqs.emplace_back(fn, h, n, "cpu");
  MeasureOptions o = quick();
  o.timeout = 1s;
  o.backends = names;
  MeasuredCostModel model(o);
  EstimateResult r = estimate_costs(model, reqs, {2, nullptr});

  CHECK(r.costs[0].is_value());
  CHECK(r.costs[1] == Cost::invalid("fake_throw: node 'MatMul': not today"));
  CHECK(r.costs[2].is_invalid());
  CHECK(r.costs[2].reason().rfind("crashed: signal 6", 0) == 0);
  CHECK(r.costs[3] == Cost::invalid("timed out after 1 s"));
  CHECK(r.costs[4].reason().rfind("crashed: signal 11", 0) == 0);
  CHECK(r.costs[5].is_value());
  CHECK(model.stats().measured == 6);
  CHECK(model.stats().invalid == 4);   // the hang is one timeout; the others measured regardless
}

namespace {
// Four threads measure fake_exclusive at once; returns how many measurements found another one
// running (fake_compiler.h). Each holds its lock for its whole 50 ms budget.
size_t overlapping_measurements(int max_parallel) {
  Graph fn = matmul();
  uint64_t h = structural_hash(fn);
  tessera::testing::TempDir dir;
  ::setenv("TESSERA_FAKE_OVERLAP_DIR", dir.path().c_str(), 1);
  MeasureOptions o = quick();
  o.budget = 50ms;
  o.max_repeats = 1000000;
  o.max_parallel = max_parallel;
  o.backends = {"fake_exclusive"};
  MeasuredCostModel model(o);
  std::vector<Cost> costs(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < costs.size(); ++i)
    threads.emplace_back([&, i] { costs[i] = model.estimate(CostRequest(fn, h, "fake_exclusive", "cpu")); });
  for (auto& t : threads) t.join();
  ::unsetenv("TESSERA_FAKE_OVERLAP_DIR");
  for (const Cost& c : costs) CHECK(c.is_value());
  CHECK(model.stats().measured == 4);
  return tessera::testing::read_lines(dir / "overlaps").size();
}
}  // namespace

TEST_CASE("measurements never exceed the parallel limit") {
  CHECK(overlapping_measurements(1) == 0);
  // The control: without the limit the same four measurements do overlap, so the count can fail.
  CHECK(overlapping_measurements(4) > 0);
}

TEST_CASE("a stop request skips measurements: Unknown, never stored") {
  Graph fn = matmul();
  std::atomic<bool> stop{true};
  CostDatabase journal;
  MeasureOptions o = quick();
  o.stop = &stop;
  o.journal = &journal;
  MeasuredCostModel model(o);
  CHECK(model.estimate(CostRequest(fn, structural_hash(fn), "ref", "cpu")).is_unknown());
  CHECK(journal.stats().entries == 0);
  CHECK(model.stats().skipped == 1);
}

TEST_CASE("a stop request kills a running measurement") {
  Graph fn = matmul();
  std::atomic<bool> stop{false};
  MeasureOptions o = quick();
  o.stop = &stop;
  o.timeout = 10s;
  MeasuredCostModel model(o);
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop = true;
  });
  Cost c = model.estimate(CostRequest(fn, structural_hash(fn), "fake_hang", "cpu"));
  stopper.join();
  CHECK(c.is_unknown());                 // killed by the stop: waiting for the 10 s timeout gives Invalid
  CHECK(model.stats().invalid == 0);
  CHECK(model.stats().skipped == 1);
}

TEST_CASE("at one thread a candidate is priced at its CPU time, not at the time it waited") {
  // fake_wait's runs wait 5 ms each for nothing, as a run on a loaded core waits for the core: at
  // one compute thread the price is the CPU time the run used (the plan's clock,
  // src/runtime/run_clock.h), above one thread the wall time.
  Graph fn = matmul();
  MeasureOptions o = quick();
  o.backends = {"fake_wait"};
  o.max_repeats = 5;
  MeasuredCostModel one(o);
  CHECK(one.cpu_clock());
  const Cost at_one = one.estimate(CostRequest(fn, structural_hash(fn), "fake_wait", "cpu"));
  REQUIRE(at_one.is_value());
  CHECK(at_one.seconds() < 0.002);
  o.threads = 2;
  MeasuredCostModel two(o);
  CHECK_FALSE(two.cpu_clock());
  const Cost at_two = two.estimate(CostRequest(fn, structural_hash(fn), "fake_wait", "cpu"));
  REQUIRE(at_two.is_value());
  CHECK(at_two.seconds() >= 0.005);
}

TEST_CASE("fingerprints: backend versions, CPU model, ISA and threads") {
  MeasureOptions o = quick();
  MeasuredCostModel a(o);
  o.backends = {"ref", "fake_ok"};
  MeasuredCostModel b(o);
  CHECK(a.fingerprint().rfind("measure/7/", 0) == 0);
  CHECK(a.fingerprint() != b.fingerprint());
  // Hot and cache-evicted timings never share database entries.
  MeasureOptions hot = quick();
  hot.evict_bytes = 0;
  CHECK(MeasuredCostModel(hot).fingerprint() != a.fingerprint());
  CHECK(a.options().evict_bytes > 0);
  CHECK(a.options().evict_bytes <= int64_t{16} << 20);
  o.threads = 2;
  MeasuredCostModel c(o);
  const std::string machine = machine_fingerprint();
  CHECK(machine.rfind(cpu_model_name() + "/isa-", 0) == 0);
  CHECK(machine.size() == cpu_model_name().size() + 5 + 8);
  CHECK(a.device_fingerprint("cpu") == "cpu/" + machine + "/t1");
  CHECK(c.device_fingerprint("cpu") == "cpu/" + machine + "/t2");
  // The test hook that fakes another machine (tests/distributed/) changes the key.
  ::setenv("TESSERA_MACHINE_FINGERPRINT", "other-machine", 1);
  MeasuredCostModel d(quick());
  ::unsetenv("TESSERA_MACHINE_FINGERPRINT");
  CHECK(d.device_fingerprint("cpu") == "cpu/other-machine/t1");
  CHECK(machine_fingerprint() == machine);
}

TEST_CASE("ISA flags: only the code-path flags of /proc/cpuinfo, sorted") {
  std::string flags = cpu_isa_flags();
  CHECK(flags.find("hypervisor") == std::string::npos);
  CHECK(flags.find("md_clear") == std::string::npos);
#if defined(__x86_64__)
  CHECK(flags.find("sse2") != std::string::npos);   // every x86-64 has it
#endif
}

TEST_CASE("--cost measure:ARG options") {
  MeasureOptions o = parse_measure_options("budget_ms=50,repeats=100,timeout_s=3,threads=2,parallel=1");
  CHECK(o.budget.count() == Approx(0.05));
  CHECK(o.max_repeats == 100);
  CHECK(o.timeout.count() == Approx(3.0));
  CHECK(o.threads == 2);
  CHECK(o.max_parallel == 1);
  CHECK(o.evict_bytes == -1);
  CHECK(parse_measure_options("evict_kb=0").evict_bytes == 0);
  CHECK(parse_measure_options("evict_kb=4096").evict_bytes == int64_t{4096} * 1024);
  CHECK_THROWS_AS(parse_measure_options("budget=5"), UserError);
  CHECK_THROWS_AS(parse_measure_options("repeats=x"), UserError);
  CHECK_THROWS_AS(parse_measure_options("repeats"), UserError);
  std::unique_ptr<CostModel> m = make_cost_model("measure:repeats=5", measure_cost_model_options());
  CHECK(m->name() == "measure");
}
