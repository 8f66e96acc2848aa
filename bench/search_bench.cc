// Search speed against graph size (issue 4): the whole partition pipeline (index, candidates of
// three backends, extraction + hashing, roofline costs, collage search, coalescing) and the
// collage search alone, on synthetic BERT-style encoders of 50 nodes per layer (2..100 layers =
// 100..5,000 nodes), plus the real 24-layer export data/models/bert_encoder_24.onnx.
// Backends: ref, onednn, eigen (built-in). Cost model: roofline (host profile).
//
//   (from the repo root, which holds data/models)  ./build/bench/search_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include "search/collage_search.h"
#include "search/partitioner.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_model.h"
#include "tessera/model_loader.h"

namespace {

using namespace tessera;

class Builder {
 public:
  ValueId input() {
    ValueId v = g.add_value(Value{"x", type(), ValueKind::Input});
    g.inputs.push_back(v);
    return v;
  }
  ValueId weight() { return g.add_value(Value{"w" + std::to_string(g.values.size()), type(), ValueKind::Constant}); }
  ValueId op(const std::string& op, std::vector<ValueId> in) {
    ValueId out = g.add_value(Value{"v" + std::to_string(g.values.size()), type(), ValueKind::Intermediate});
    Node n;
    n.name = op + "_" + std::to_string(g.nodes.size());
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    g.add_node(std::move(n));
    return out;
  }
  static TensorType type() { return TensorType{DType::f32, {128, 256}}; }
  Graph g;
};

ValueId layer_norm(Builder& b, ValueId x) {   // 9 nodes, decomposed as exporters write it
  ValueId mean = b.op("ReduceMean", {x});
  ValueId d = b.op("Sub", {x, mean});
  ValueId var = b.op("ReduceMean", {b.op("Pow", {d, b.weight()})});
  ValueId sd = b.op("Sqrt", {b.op("Add", {var, b.weight()})});
  ValueId scaled = b.op("Mul", {b.op("Div", {d, sd}), b.weight()});
  return b.op("Add", {scaled, b.weight()});
}

ValueId projection(Builder& b, ValueId x) {   // 4 nodes
  ValueId biased = b.op("Add", {b.op("MatMul", {x, b.weight()}), b.weight()});
  return b.op("Transpose", {b.op("Reshape", {biased, b.weight()})});
}

ValueId encoder_layer(Builder& b, ValueId x) {   // 50 nodes
  ValueId q = projection(b, x), k = projection(b, x), v = projection(b, x);
  ValueId scaled = b.op("Div", {b.op("MatMul", {q, k}), b.weight()});
  ValueId probs = b.op("Softmax", {b.op("Add", {scaled, b.weight()})});
  ValueId ctx = b.op("MatMul", {probs, v});
  ValueId merged = b.op("Reshape", {b.op("Transpose", {ctx}), b.weight()});
  ValueId out = b.op("Add", {b.op("MatMul", {merged, b.weight()}), b.weight()});
  ValueId h = layer_norm(b, b.op("Add", {out, x}));
  ValueId up = b.op("Add", {b.op("MatMul", {h, b.weight()}), b.weight()});
  ValueId erf = b.op("Erf", {b.op("Div", {up, b.weight()})});
  ValueId gelu = b.op("Mul", {b.op("Mul", {up, b.op("Add", {erf, b.weight()})}), b.weight()});
  ValueId down = b.op("Add", {b.op("MatMul", {gelu, b.weight()}), b.weight()});
  return layer_norm(b, b.op("Add", {down, h}));
}

Graph bert(int layers) {
  Builder b;
  ValueId x = b.input();
  for (int i = 0; i < layers; ++i) x = encoder_layer(b, x);
  b.g.outputs.push_back(x);
  return std::move(b.g);
}

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
