// Lowering to kernel calls with buffers, dispatch overrides, and the static memory planner.
#include <random>

#include "emit/emit_test_util.h"
#include "emit/backend_pipeline.h"
#include "emit/lower.h"
#include "emit/module_printer.h"
#include "emit/outline.h"

namespace tessera {
namespace {

Graph softmax_graph() {
  Graph g;
  g.name = "softmax_relu";
  auto value = [&](const std::string& name, ValueKind kind) {
    return g.add_value(Value{name, TensorType{DType::f32, {2, 8}}, kind});
  };
  ValueId x = value("x", ValueKind::Input);
  g.inputs.push_back(x);
  ValueId s = value("s", ValueKind::Intermediate), y = value("y", ValueKind::Intermediate);
  g.add_node(Node{"softmax", "Softmax", "", {{"axis", int64_t{-1}}}, {x}, {s}});
  g.add_node(Node{"relu", "Relu", "", {}, {s}, {y}});
  g.outputs.push_back(y);
  return g;
}

LowerOptions builtin_dispatch(const std::vector<std::string>& backends) {
  LowerOptions options;
  for (const std::string& b : backends) options.dispatch[b] = builtin_pipeline(b).dispatch;
  return options;
}

TEST_CASE("dispatch: an override replaces one op, the default lowers the rest", "[emit][lower]") {
  Graph g = softmax_graph();
  Plan on_tvm = test::hand_plan(g, {{"tvm", {"softmax", "relu"}}});
  Plan on_eigen = test::hand_plan(g, {{"eigen", {"softmax", "relu"}}});
  LowerOptions options = builtin_dispatch({"tvm", "eigen"});
  const LoweredFunction tvm = *lower(outline(g, on_tvm), options).functions.begin()->second.lowered;
  const LoweredFunction eigen = *lower(outline(g, on_eigen), options).functions.begin()->second.lowered;
  REQUIRE(tvm.calls.size() == 2);
  CHECK(tvm.calls[0].kernel == "tvm.softmax");
  CHECK(tvm.calls[1].kernel == "ref.Relu");
  CHECK(eigen.calls[0].kernel == "ref.Softmax");
  CHECK(eigen.calls[1].kernel == "ref.Relu");
}

TEST_CASE("dispatch: a composite with a fused kernel lowers to one call", "[emit][lower]") {
  Graph g = test::load_test_model("conv_block.json");
  Plan plan = test::hand_plan(g, {{"onednn", {"conv0"}}, {"byoc", {"relu0"}, {{"byoc.relu", {"relu0"}}}},
                                  {"onednn", {"conv1"}}, {"byoc", {"add0", "relu1"}, {{"byoc.add", {"add0"}}, {"byoc.relu", {"relu1"}}}}});
  Module m = lower(outline(g, plan), builtin_dispatch({"byoc"}));
  test::check_golden("lower_conv_block", print_module(m));
  for (const auto& [symbol, fn] : m.functions)
    for (const KernelCall& call : fn.lowered->calls)
      if (fn.backend() == "byoc") CHECK(call.kernel.rfind("byoc.", 0) == 0);
}

TEST_CASE("lower: main's calls write caller-allocated buffers", "[emit][lower]") {
  Graph g = test::load_test_model("conv_block.json");
  Module m = lower(outline(g, test::hand_plan(g, {{"onednn", {"conv0", "relu0", "conv1"}}})), {});
  const LoweredFunction& main = *m.main_lowered;
  REQUIRE(main.calls.size() == 3);   // the call, then add0 and relu1 still inline
  CHECK(main.calls[0].kernel == "@" + m.functions.begin()->first);
  CHECK(main.buffers[static_cast<size_t>(main.calls[0].outputs[0])].kind == BufferKind::Workspace);
  const LoweredFunction& fn = *m.functions.begin()->second.lowered;
  CHECK(fn.buffers[static_cast<size_t>(fn.calls.back().outputs[0])].kind == BufferKind::Output);
  test::check_pass_golden("lower_again", print_module(m), print_module(lower(m, {})));
}

TEST_CASE("memory plan: resnet18's main, no two live buffers overlap, reuse pays", "[emit][memory]") {
  Graph g = test::load_test_model("resnet18.onnx");
  Module m = lower(Module::from_graph(g), {});
  const LoweredFunction& main = *m.main_lowered;
  auto lifetimes = workspace_lifetimes(main);
  CHECK_FALSE(verify_memory_plan(lifetimes, main.memory));
  CHECK(main.memory.workspace_bytes * 3 < main.memory.sum_bytes);
  CHECK(main.memory.workspace_bytes == 2 * 3211264);   // two 64x112x112 f32 maps live at once: optimal
}

TEST_CASE("memory plan: random lifetimes never overlap; greedy is deterministic", "[emit][memory]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<BufferLifetime> buffers;
    int n = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int i = 0; i < n; ++i) {
      int first = std::uniform_int_distribution<int>(0, 30)(rng);
      buffers.push_back({std::uniform_int_distribution<int64_t>(0, 5000)(rng), first,
                         first + std::uniform_int_distribution<int>(0, 8)(rng)});
    }
    MemoryPlan plan = plan_memory(buffers, 64);
    auto problem = verify_memory_plan(buffers, plan);
    INFO(problem.value_or(""));
    CHECK_FALSE(problem);
    CHECK(plan.workspace_bytes <= plan.sum_bytes + 64 * n);
    CHECK(plan_memory(buffers, 64).offsets == plan.offsets);
  }
  // Overlap is detected: two live buffers at one offset.
  std::vector<BufferLifetime> two{{100, 0, 1}, {100, 1, 2}};
  MemoryPlan bad{{0, 0}, 100, 200, 64};
  CHECK(verify_memory_plan(two, bad));
}

}  // namespace
}  // namespace tessera
