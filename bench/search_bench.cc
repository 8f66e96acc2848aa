// Search speed against graph size: the whole partition pipeline (index, candidates of
// three backends, extraction + hashing, roofline costs, collage search, coalescing) and the
// collage search alone, on synthetic BERT-style encoders of 50 nodes per layer (2..100 layers =
// 100..5,000 nodes), plus the real 24-layer export data/models/bert_encoder_24.onnx.
// Backends: ref, onednn, eigen (built-in). Cost model: roofline (host profile).
//
//   (from the repo root, which holds data/models)  ./build/bench/search_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include "synthetic_bert.h"

#include "search/collage_search.h"
#include "search/partitioner.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_model.h"
#include "tessera/model_loader.h"

namespace {

using namespace tessera;

using bench::bert;

std::vector<BackendSpec> backends() { return resolve_backends({"ref", "onednn", "eigen"}, {}); }

void report(benchmark::State& state, const Graph& g, const PartitionOutcome& out) {
  state.counters["nodes"] = g.num_nodes();
  state.counters["candidates"] = static_cast<double>(out.plan.stats.candidates);
  state.counters["states"] = static_cast<double>(out.plan.stats.states);
  state.counters["partitions"] = static_cast<double>(out.plan.partitions.size());
}

// Whole pipeline, -j N (second argument).
void BM_Pipeline(benchmark::State& state) {
  Graph g = bert(static_cast<int>(state.range(0)));
  auto specs = backends();
  auto model = make_cost_model("roofline");
  PartitionOptions options;
  options.threads = static_cast<int>(state.range(1));
  PartitionOutcome out;
  for (auto _ : state) out = partition_graph(g, specs, *model, options);
  report(state, g, out);
}
BENCHMARK(BM_Pipeline)->Args({2, 1})->Args({10, 1})->Args({20, 1})->Args({20, 2})->Args({50, 1})->Args({100, 1})
    ->Unit(benchmark::kMillisecond);

// The collage search alone over the costed candidates.
void BM_CollageSearch(benchmark::State& state) {
  Graph g = bert(static_cast<int>(state.range(0)));
  auto specs = backends();
  auto model = make_cost_model("roofline");
  PartitionOutcome out = partition_graph(g, specs, *model, {});
  for (auto _ : state) benchmark::DoNotOptimize(collage_search(out.problem));
  report(state, g, out);
}
BENCHMARK(BM_CollageSearch)->Arg(2)->Arg(10)->Arg(20)->Arg(50)->Arg(100)->Unit(benchmark::kMillisecond);

// The real 24-layer export (1,176 nodes), import included, -j N.
void BM_Bert24(benchmark::State& state) {
  auto specs = backends();
  auto model = make_cost_model("roofline");
  PartitionOptions options;
  options.threads = static_cast<int>(state.range(0));
  PartitionOutcome out;
  Graph g;
  for (auto _ : state) {
    g = load_model("data/models/bert_encoder_24.onnx");
    out = partition_graph(g, specs, *model, options);
  }
  report(state, g, out);
}
BENCHMARK(BM_Bert24)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
