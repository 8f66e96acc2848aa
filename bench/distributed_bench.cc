// What rank 0 of `tessera tune --mpi` spends per job, MPI itself aside (src/distributed/):
// encoding a job, decoding its result, and appending the result to the cost database (one
// flock + write(2) per record, as the dealer does). Their sum bounds the jobs per second one
// rank 0 can deal and write. Figures in docs/benchmarks.md ("Distributed tuning").
//
//   build/bench/distributed_bench
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>

#include "tessera/cost_database.h"
#include "distributed/tune_protocol.h"

namespace {
using namespace tessera;
using namespace tessera::distributed;

void BM_JobAndResultMessages(benchmark::State& state) {
  uint64_t id = 0;
  for (auto _ : state) {
    std::string job = encode(Job{id, id * 3, "9f3a0c11d2e4b577", "onednn"});
    std::string answer = encode(Result{id, CostEntry{Cost::value(1.25e-5 + id * 1e-9), 2.5e-7, 50}});
    Message m = decode(answer);
    benchmark::DoNotOptimize(job);
    benchmark::DoNotOptimize(m);
    ++id;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_JobAndResultMessages);

void BM_DatabaseAppend(benchmark::State& state) {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tessera_distributed_bench_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  {
    std::unique_ptr<CostDatabase> db = CostDatabase::open(path);
    uint64_t i = 0;
    for (auto _ : state) {
      char hash[17];
      std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(i));
      db->insert(CostKey{hash, "onednn", "cpu/AMD EPYC/isa-03244388/t1", "measure/1/5c1d2e3f4a5b6c7d"},
                 CostEntry{Cost::value(1e-5 + i * 1e-9), 2e-7, 50});
      ++i;
    }
  }
  std::filesystem::remove(path);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DatabaseAppend);

}  // namespace

BENCHMARK_MAIN();
