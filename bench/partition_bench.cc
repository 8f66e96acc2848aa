// Candidate enumeration speed: the hot spot of a Collage-style search.
//
// A synthetic BERT-style encoder built in C++, 50 nodes per layer (Q/K/V MatMul+Add+Reshape+
// Transpose, scores MatMul/Div/Add/Softmax, context MatMul/Transpose/Reshape, output projection +
// residual, decomposed LayerNorm, FFN with erf-GELU, residual, LayerNorm): 20 layers = 1,000
// nodes. Three backends: onednn and eigen (built-in, tvm-style fusion) and "fuseall" (every op,
// arbitrary fusion, max_depth 4, max_exits 1), the worst case for the closure.
//
//   ./build/bench/partition_bench --benchmark_filter=Enumerate
#include <benchmark/benchmark.h>

#include "synthetic_bert.h"

#include "tessera/backend_spec.h"
#include "backends/spec/backend_spec_detail.h"
#include "backends/spec/candidate_space.h"
#include "partition/dataflow_index.h"

namespace {

using namespace tessera;

using bench::bert;

std::vector<BackendSpec> three_backends() {
  return {builtin_backend_spec("onednn"), builtin_backend_spec("eigen"),
          parse_backend_spec(R"({"format": "tessera.backend", "version": 1, "name": "fuseall", "ops": "*",
                                 "fusion": "arbitrary", "max_depth": 4, "max_exits": 1})",
                             "fuseall.json")};
}

void BM_DataflowIndex(benchmark::State& state) {
  Graph g = bert(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(DataflowIndex(g));
  state.counters["nodes"] = g.num_nodes();
}
BENCHMARK(BM_DataflowIndex)->Arg(20)->Unit(benchmark::kMillisecond);

// Index + all three backends' candidates, sequentially (-j 1).
void BM_EnumerateThreeBackends(benchmark::State& state) {
  Graph g = bert(static_cast<int>(state.range(0)));
  auto backends = three_backends();
  size_t candidates = 0;
  for (auto _ : state) {
    DataflowIndex index(g);
    candidates = enumerate_candidates(index, backends, 1).size();
  }
  state.counters["nodes"] = g.num_nodes();
  state.counters["candidates"] = static_cast<double>(candidates);
}
BENCHMARK(BM_EnumerateThreeBackends)->Arg(5)->Arg(10)->Arg(20)->Arg(40)->Unit(benchmark::kMillisecond);

void BM_EnumerateArbitraryOnly(benchmark::State& state) {
  Graph g = bert(20);
  DataflowIndex index(g);
  std::vector<BackendSpec> backends{three_backends()[2]};
  backends[0].detail().limits.max_depth = static_cast<int>(state.range(0));
  size_t candidates = 0;
  for (auto _ : state) candidates = enumerate_candidates(index, backends, 1).size();
  state.counters["candidates"] = static_cast<double>(candidates);
}
BENCHMARK(BM_EnumerateArbitraryOnly)->Arg(2)->Arg(3)->Arg(4)->Arg(5)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
