// The halide backend's autoschedulers on four fused functions: compile time (a counter) and run
// time (the benchmark), one thread. Functions, as the halide backend gets them:
//   upsample_add_relu: Resize(x[1,64,80,80], nearest 2x) + s[1,64,160,160], Relu   (PaddleOCR det's
//                      FPN tail; the first measurement)
//   softmax:           Softmax(x[12,128,128] * 0.125)                              (BERT attention)
//   layer_norm:        the exported LayerNorm of (x + r)[1,128,768] (ReduceMean, Sub, Pow, ...)
//   max_pool:          MaxPool 3x3 / 2, pads 1, of x[1,64,112,112] + Relu          (resnet18's stem)
// Each benchmark compiles into a fresh cache directory (so it really compiles), then times runs.
// Usage: halide_bench [--benchmark_filter=...]; the scheduler is the benchmark's second name part.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backends/halide/halide_compiler.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/host_tensor.h"

using namespace tessera;

namespace {

struct Builder {
  Graph g;
  ValueId input(const std::string& name, Shape shape) {
    const ValueId id = g.add_value(Value{name, TensorType{DType::f32, std::move(shape)}, ValueKind::Input});
    g.inputs.push_back(id);
    return id;
  }
  template <typename T>
  ValueId constant(const std::string& name, DType t, Shape shape, const std::vector<T>& v) {
    auto bytes = std::make_shared<TensorBytes>(v.size() * sizeof(T));
    std::memcpy(bytes->data(), v.data(), bytes->size());
    Value val{name, TensorType{t, std::move(shape)}, ValueKind::Constant};
    val.data = bytes;
    return g.add_value(std::move(val));
  }
  ValueId scalar(const std::string& name, float v) { return constant<float>(name, DType::f32, {}, {v}); }
  ValueId node(const std::string& op, std::vector<ValueId> ins, Shape out, Attributes attrs = {}) {
    const ValueId id = g.add_value(Value{op + std::to_string(g.nodes.size()), TensorType{DType::f32, std::move(out)}});
    g.add_node(Node{op + "_" + std::to_string(g.nodes.size()), op, "", std::move(attrs), std::move(ins), {id}});
    return id;
  }
};

Graph upsample_add_relu() {
  Builder b;
  const ValueId x = b.input("x", {1, 64, 80, 80}), s = b.input("s", {1, 64, 160, 160});
  const ValueId sc = b.constant<float>("scales", DType::f32, {4}, {1, 1, 2, 2});
  const ValueId up = b.node("Resize", {x, kNoValue, sc}, {1, 64, 160, 160},
                            {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("asymmetric")},
                             {"nearest_mode", std::string("floor")}});
  b.g.outputs = {b.node("Relu", {b.node("Add", {up, s}, {1, 64, 160, 160})}, {1, 64, 160, 160})};
  return b.g;
}

Graph softmax() {
  Builder b;
  const ValueId x = b.input("x", {12, 128, 128});
  b.g.outputs = {b.node("Softmax", {b.node("Mul", {x, b.scalar("scale", 0.125f)}, {12, 128, 128})}, {12, 128, 128})};
  return b.g;
}

Graph layer_norm() {
  Builder b;
  const Shape xs{1, 128, 768}, rs{1, 128, 1};
  const ValueId x = b.input("x", xs), r = b.input("r", xs), g = b.input("gamma", {768}), be = b.input("beta", {768});
  const ValueId axes = b.constant<int64_t>("axes", DType::i64, {1}, {-1});
  const ValueId a = b.node("Add", {x, r}, xs);
  const ValueId d = b.node("Sub", {a, b.node("ReduceMean", {a, axes}, rs)}, xs);
  const ValueId v = b.node("ReduceMean", {b.node("Pow", {d, b.scalar("two", 2.0f)}, xs), axes}, rs);
  const ValueId sd = b.node("Sqrt", {b.node("Add", {v, b.scalar("eps", 1e-5f)}, rs)}, rs);
  b.g.outputs = {b.node("Add", {b.node("Mul", {b.node("Div", {d, sd}, xs), g}, xs), be}, xs)};
  return b.g;
}

Graph max_pool() {
  Builder b;
  const ValueId x = b.input("x", {1, 64, 112, 112});
  const ValueId p = b.node("MaxPool", {x}, {1, 64, 56, 56},
                           {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
                            {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.g.outputs = {b.node("Relu", {p}, {1, 64, 56, 56})};
  return b.g;
}

Graph tiny_relu() {
  Builder b;
  b.g.outputs = {b.node("Relu", {b.input("x", {8})}, {8})};
  return b.g;
}

// Compiles into an empty cache directory (the process's shared runtime, built by a warm-up
// compile the first time, is not counted), then times runs. One call per benchmark (fixed
// iterations), so each scheduler compiles each function once.
void run_function(benchmark::State& state, Graph (*make)(), const char* scheduler) {
  static const auto dir = std::filesystem::temp_directory_path() / ("tessera-halide-bench-" + std::to_string(getpid()));
  static int fresh = 0;
  const auto pipelines = dir / ("run" + std::to_string(fresh++));
  std::filesystem::create_directories(pipelines);
  setenv("TESSERA_HALIDE_CACHE", pipelines.c_str(), 1);
  setenv("TESSERA_HALIDE_AUTOSCHEDULER", scheduler, 1);
  set_compute_threads(1);
  auto compiler = make_backend_compiler("halide");
  static bool runtime_ready = false;
  if (!runtime_ready) compiler->compile(tiny_relu());
  runtime_ready = true;
  const Graph fn = make();
  std::vector<HostTensor> ins, outs;
  for (size_t i = 0; i < fn.inputs.size(); ++i) ins.push_back(HostTensor::random(fn.value(fn.inputs[i]).type, i + 1));
  for (ValueId v : fn.outputs) outs.emplace_back(fn.value(v).type);
  std::vector<ConstTensorView> in_views;
  std::vector<TensorView> out_views;
  for (const HostTensor& t : ins) in_views.push_back(t.view());
  for (HostTensor& t : outs) out_views.push_back(t.view());
  const auto t0 = std::chrono::steady_clock::now();
  auto compiled = compiler->compile(fn);
  const double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (auto _ : state) compiled->run(in_views, out_views);
  state.counters["compile_ms"] = compile_ms;
  std::filesystem::remove_all(pipelines);
}

}  // namespace

#define TESSERA_HALIDE_BENCH(fn)                                                                                \
  BENCHMARK_CAPTURE(run_function, fn/Mullapudi2016, &fn, "Mullapudi2016")->Unit(benchmark::kMillisecond)->Iterations(20);     \
  BENCHMARK_CAPTURE(run_function, fn/Adams2019, &fn, "Adams2019")->Unit(benchmark::kMillisecond)->Iterations(20);             \
  BENCHMARK_CAPTURE(run_function, fn/Li2018, &fn, "Li2018")->Unit(benchmark::kMillisecond)->Iterations(20);                   \
  BENCHMARK_CAPTURE(run_function, fn/simple, &fn, "simple")->Unit(benchmark::kMillisecond)->Iterations(20);

TESSERA_HALIDE_BENCH(upsample_add_relu)
TESSERA_HALIDE_BENCH(softmax)
TESSERA_HALIDE_BENCH(layer_norm)
TESSERA_HALIDE_BENCH(max_pool)
BENCHMARK_MAIN();
