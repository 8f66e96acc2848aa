// Candidate enumeration speed: the hot spot of a Collage-style search (issue 3).
//
// A synthetic BERT-style encoder built in C++, 50 nodes per layer (Q/K/V MatMul+Add+Reshape+
// Transpose, scores MatMul/Div/Add/Softmax, context MatMul/Transpose/Reshape, output projection +
// residual, decomposed LayerNorm, FFN with erf-GELU, residual, LayerNorm): 20 layers = 1,000
// nodes. Three backends: onednn and eigen (built-in, tvm-style fusion) and "fuseall" (every op,
// arbitrary fusion, max_depth 4, max_exits 1), the worst case for the closure.
//
//   ./build/bench/partition_bench --benchmark_filter=Enumerate
#include <benchmark/benchmark.h>

#include "tessera/backend_spec.h"
#include "tessera/candidate_space.h"
#include "tessera/dataflow_index.h"

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

ValueId layer_norm(Builder& b, ValueId x) {   // 9 nodes
  ValueId mean = b.op("ReduceMean", {x});
  ValueId d = b.op("Sub", {x, mean});
  ValueId sq = b.op("Pow", {d, b.weight()});
  ValueId var = b.op("ReduceMean", {sq});
  ValueId eps = b.op("Add", {var, b.weight()});
  ValueId sd = b.op("Sqrt", {eps});
  ValueId norm = b.op("Div", {d, sd});
  ValueId scaled = b.op("Mul", {norm, b.weight()});
  return b.op("Add", {scaled, b.weight()});
}

ValueId projection(Builder& b, ValueId x) {   // 4 nodes
  ValueId mm = b.op("MatMul", {x, b.weight()});
  ValueId biased = b.op("Add", {mm, b.weight()});
  ValueId heads = b.op("Reshape", {biased, b.weight()});
  return b.op("Transpose", {heads});
}

ValueId encoder_layer(Builder& b, ValueId x) {   // 50 nodes
  ValueId q = projection(b, x), k = projection(b, x), v = projection(b, x);
  ValueId scores = b.op("MatMul", {q, k});
  ValueId scaled = b.op("Div", {scores, b.weight()});
  ValueId masked = b.op("Add", {scaled, b.weight()});
  ValueId probs = b.op("Softmax", {masked});
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
  backends[0].limits.max_depth = static_cast<int>(state.range(0));
  size_t candidates = 0;
  for (auto _ : state) candidates = enumerate_candidates(index, backends, 1).size();
  state.counters["candidates"] = static_cast<double>(candidates);
}
BENCHMARK(BM_EnumerateArbitraryOnly)->Arg(2)->Arg(3)->Arg(4)->Arg(5)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
