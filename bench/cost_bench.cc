// Candidates costed per second: estimate_costs over distinct candidate functions with -j1 and -j2,
// for the mock and roofline models, and the all-cache-hits path. Figures in docs/benchmarks.md.
//
//   build-cost/cost_bench --benchmark_filter=Estimate
//
// The workload: 2,000 distinct functions (Conv/MatMul/elementwise chains of 1-8 nodes, the sizes
// of candidates the partitioner proposes), each requested on three backends. Requests, graphs and
// structural hashes are built once, outside the timed loop.
#include <benchmark/benchmark.h>

#include <memory>

#include "cost_models/estimator.h"
#include "cost_models/mock_cost_model.h"
#include "cost_models/roofline_cost_model.h"
#include "ir/structural_hash.h"

namespace {
using namespace tessera;

Graph candidate(int i) {
  Graph g;
  const int64_t c = 8 + i % 64, hw = 14 + (i / 64) % 16;
  auto value = [&](const std::string& name, Shape s, ValueKind kind) {
    ValueId v = g.add_value(Value{name, TensorType{DType::f32, std::move(s)}, kind});
    if (kind == ValueKind::Input) g.inputs.push_back(v);
    return v;
  };
  auto node = [&](const std::string& op, std::vector<ValueId> in, Shape out, Attributes attrs = {}) {
    ValueId y = value(op + std::to_string(g.nodes.size()), std::move(out), ValueKind::Intermediate);
    g.add_node(Node{op + std::to_string(g.nodes.size()), op, "", std::move(attrs), std::move(in), {y}});
    return y;
  };
  ValueId x = value("x", {1, c, hw, hw}, ValueKind::Input);
  ValueId v = node("Conv", {x, value("w", {c, c, 3, 3}, ValueKind::Constant)}, {1, c, hw - 2, hw - 2},
                   {{"kernel_shape", std::vector<int64_t>{3, 3}}});
  const char* tail[] = {"Relu", "Add", "Sigmoid", "Mul", "Tanh", "Abs", "Relu"};
  for (int k = 0; k < i % 8; ++k) {
    std::vector<ValueId> in = {v};
    if (k % 2 == 1) in.push_back(v);
    v = node(tail[k % 7], in, {1, c, hw - 2, hw - 2});
  }
  if (i % 3 == 0) {
    v = node("Reshape", {v}, {c, (hw - 2) * (hw - 2)});
    v = node("MatMul", {v, value("m", {(hw - 2) * (hw - 2), 64}, ValueKind::Constant)}, {c, 64});
  }
  g.outputs.push_back(v);
  return g;
}

struct Workload {
  std::vector<Graph> graphs;
  std::vector<CostRequest> requests;
  Workload() {
    for (int i = 0; i < 2000; ++i) graphs.push_back(candidate(i));
    for (const Graph& g : graphs) {
      uint64_t h = structural_hash(g);
      for (const char* b : {"onednn", "eigen", "ref"}) requests.emplace_back(g, h, b, "cpu");
    }
  }
};

const Workload& workload() {
  static const Workload w;
  return w;
}

std::unique_ptr<CostModel> make(int which) {
  if (which == 0) {
    return std::make_unique<MockCostModel>(parse_mock_costs(R"({"format": "tessera.mock_costs", "version": 1,
        "backends": {"onednn": {"per_op": 1.0}, "eigen": {"per_op": 1.5}, "ref": {"per_op": 3.0}}})", "bench"));
  }
  return make_cost_model("roofline:xeon_8380");
}

// Arguments: model (0 mock, 1 roofline), threads.
void BM_Estimate(benchmark::State& state) {
  const Workload& w = workload();
  auto model = make(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    EstimateResult r = estimate_costs(*model, w.requests, {static_cast<int>(state.range(1)), nullptr});
    benchmark::DoNotOptimize(r.costs.data());
  }
  state.SetLabel(model->name() + " -j" + std::to_string(state.range(1)));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(w.requests.size()));
}
BENCHMARK(BM_Estimate)->ArgsProduct({{0, 1}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();

// Every request answered by an in-memory database: the cost of keys, dedupe and lookups alone.
void BM_EstimateCached(benchmark::State& state) {
  const Workload& w = workload();
  auto model = make(1);
  CostDatabase db;
  estimate_costs(*model, w.requests, {2, &db});
  for (auto _ : state) {
    EstimateResult r = estimate_costs(*model, w.requests, {1, &db});
    benchmark::DoNotOptimize(r.costs.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(w.requests.size()));
}
BENCHMARK(BM_EstimateCached)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
