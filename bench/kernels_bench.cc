// Backend compilers on two representative functions, compile once + timed runs, per backend:
//   conv:   x[1,64,56,56] * W[64,64,3,3], pads 1 (resnet18's layer1 conv), + Relu
//   matmul: A[128,256] x B[256,1024] (a BERT-base-like FFN projection at sequence length 128)
// Weights are function inputs, as extract_function makes them. Threads: set_compute_threads(T)
// with T = the benchmark argument. See docs/benchmarks.md for figures.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/compilers/backend_compiler.h"
#include "tessera/host_tensor.h"

using namespace tessera;

namespace {

ValueId add_input(Graph& g, const std::string& name, Shape shape) {
  Value v;
  v.name = name;
  v.type = {DType::f32, std::move(shape)};
  v.kind = ValueKind::Input;
  const ValueId id = g.add_value(std::move(v));
  g.inputs.push_back(id);
  return id;
}

ValueId add_node(Graph& g, const std::string& op, std::vector<ValueId> ins, Shape out, Attributes attrs = {}) {
  Value v;
  v.name = op + "_out";
  v.type = {DType::f32, std::move(out)};
  const ValueId id = g.add_value(std::move(v));
  Node n;
  n.name = op + "_" + std::to_string(g.nodes.size());
  n.op = op;
  n.attrs = std::move(attrs);
  n.inputs = std::move(ins);
  n.outputs = {id};
  g.add_node(std::move(n));
  return id;
}

Graph conv_fn() {
  Graph g;
  const ValueId x = add_input(g, "x", {1, 64, 56, 56}), w = add_input(g, "w", {64, 64, 3, 3});
  const ValueId c = add_node(g, "Conv", {x, w}, {1, 64, 56, 56}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  g.outputs = {add_node(g, "Relu", {c}, {1, 64, 56, 56})};
  return g;
}

Graph matmul_fn() {
  Graph g;
  const ValueId a = add_input(g, "a", {128, 256}), b = add_input(g, "b", {256, 1024});
  g.outputs = {add_node(g, "MatMul", {a, b}, {128, 1024})};
  return g;
}

void run_function(benchmark::State& state, const std::string& backend, const Graph& fn, double flops) {
  set_compute_threads(static_cast<int>(state.range(0)));
  std::unique_ptr<CompiledFunction> compiled;
  try {
    compiled = make_backend_compiler(backend)->compile(fn);
  } catch (const KernelUnsupported& e) {
    state.SkipWithError(e.what());
    return;
  }
  std::vector<HostTensor> ins, outs;
  std::vector<ConstTensorView> in_views;
  std::vector<TensorView> out_views;
  for (size_t i = 0; i < fn.inputs.size(); ++i) ins.push_back(HostTensor::random(fn.value(fn.inputs[i]).type, i + 1));
  for (ValueId v : fn.outputs) outs.emplace_back(fn.value(v).type);
  for (const HostTensor& t : ins) in_views.push_back(t.view());
  for (HostTensor& t : outs) out_views.push_back(t.view());
  compiled->run(in_views, out_views);   // warm-up: weight reorders happen here
  for (auto _ : state) compiled->run(in_views, out_views);
  state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_conv(benchmark::State& state, const std::string& backend) {
  static const Graph fn = conv_fn();
  run_function(state, backend, fn, 2.0 * 64 * 56 * 56 * 64 * 9);
}

void BM_matmul(benchmark::State& state, const std::string& backend) {
  static const Graph fn = matmul_fn();
  run_function(state, backend, fn, 2.0 * 128 * 256 * 1024);
}

void BM_compile(benchmark::State& state, const std::string& backend) {
  static const Graph fn = conv_fn();
  set_compute_threads(1);
  auto compiler = make_backend_compiler(backend);
  for (auto _ : state) benchmark::DoNotOptimize(compiler->compile(fn));
}

}  // namespace

BENCHMARK_CAPTURE(BM_conv, ref, std::string("ref"))->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK_CAPTURE(BM_conv, onednn, std::string("onednn"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_conv, blas, std::string("blas"))->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul, ref, std::string("ref"))->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul, onednn, std::string("onednn"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul, eigen, std::string("eigen"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul, blas, std::string("blas"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_compile, onednn, std::string("onednn"))->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
