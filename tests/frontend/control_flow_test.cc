// Control flow at import (src/frontend/control_flow.h, if_inlining.h) and on ref
// (src/backends/ref/control_flow.cc): an If whose condition folds is inlined; one decided at run
// time stays, closed over what its branches read, and ref runs the branch the condition picks;
// the JSON form round-trips; a Loop is closed the same way and ref runs its body per iteration;
// a Scan is typed from its static length and run per row.
#include <catch2/catch.hpp>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"
#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "tessera/error.h"
#include "frontend/json_graph.h"
#include "tessera/model_loader.h"
#include "frontend/onnx_export.h"

namespace tessera {
namespace {

onnx::NodeProto node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                     const std::string& name = "") {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name.empty() ? op + "_" + out[0] : name);
  for (const auto& s : in) n.add_input(s);
  for (const auto& s : out) n.add_output(s);
  return n;
}

onnx::AttributeProto graph_attr(const std::string& name, const onnx::GraphProto& g) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::GRAPH);
  *a.mutable_g() = g;
  return a;
}

onnx::GraphProto branch(const std::string& name, std::vector<onnx::NodeProto> nodes, const std::string& out) {
  onnx::GraphProto g;
  g.set_name(name);
  for (auto& n : nodes) *g.add_node() = n;
  g.add_output()->set_name(out);
  return g;
}

onnx::ModelProto model(const onnx::GraphProto& g) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  *m.mutable_graph() = g;
  return m;
}

Graph load(const onnx::ModelProto& m) {
  testing::TempDir dir;
  const std::string path = dir.file("model.onnx");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  ImportOptions options;
  options.warn = [](const std::string&) {};
  return load_model(path, options);
}

// y = If(c) {then: Add(Relu(x), w); else: Mul(Relu(x), w)}: c is an input, known only at run time.
onnx::ModelProto runtime_if() {
  onnx::GraphProto g;
  g.set_name("runtime_if");
  *g.add_input() = value_info_to_onnx("x", TensorType{DType::f32, {2, 3}});
  *g.add_input() = value_info_to_onnx("c", TensorType{DType::boolean, {}});
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  auto bytes = std::make_shared<TensorBytes>(reinterpret_cast<const uint8_t*>(w.data()),
                                             reinterpret_cast<const uint8_t*>(w.data() + w.size()));
  *g.add_initializer() = tensor_to_onnx("w", Tensor{TensorType{DType::f32, {2, 3}}, bytes});
  *g.add_node() = node("Relu", {"x"}, {"r"});
  onnx::NodeProto if_node = node("If", {"c"}, {"y"}, "the_if");
  *if_node.add_attribute() = graph_attr("then_branch", branch("then", {node("Add", {"r", "w"}, {"t"})}, "t"));
  *if_node.add_attribute() = graph_attr("else_branch", branch("else", {node("Mul", {"r", "w"}, {"e"})}, "e"));
  *g.add_node() = if_node;
  *g.add_output() = value_info_to_onnx("y", TensorType{DType::f32, {2, 3}});
  return model(g);
}

std::vector<float> run_ref(const Graph& g, bool cond) {
  std::map<ValueId, HostTensor> bindings;
  bindings[g.find_value("x")] = HostTensor::of<float>(DType::f32, {2, 3}, {-1, 1, -2, 2, -3, 3});
  bindings[g.find_value("c")] = HostTensor::of<uint8_t>(DType::boolean, {}, {static_cast<uint8_t>(cond)});
  std::vector<HostTensor> values = interpret(g, make_ref_kernels(), bindings);
  auto y = values[static_cast<size_t>(g.outputs[0])].as<float>();
  return {y.begin(), y.end()};
}

}  // namespace

TEST_CASE("an If decided at run time is closed over what its branches read", "[frontend][control_flow]") {
  Graph g = load(runtime_if());
  const NodeId id = g.find_node("the_if");
  REQUIRE(id != kNoNode);
  const Node& n = g.node(id);
  // The condition, then the captured intermediate; the initializer w is copied into the branches.
  REQUIRE(n.inputs.size() == 2);
  CHECK(g.value(n.inputs[0]).name == "c");
  CHECK(g.value(n.inputs[1]).name == "r");
  const Graph* then_g = attr_graph(n.attrs, "then_branch");
  const Graph* else_g = attr_graph(n.attrs, "else_branch");
  REQUIRE(then_g);
  REQUIRE(else_g);
  CHECK(then_g->inputs.size() == 1);
  CHECK(then_g->value(then_g->inputs[0]).name == "r");
  CHECK(then_g->value(then_g->find_value("w")).is_constant());
  CHECK(then_g->node(0).op == "Add");
  CHECK(else_g->node(0).op == "Mul");
  CHECK(g.value(g.outputs[0]).type == TensorType{DType::f32, {2, 3}});
  CHECK(attribute_to_string(n.attrs.at("then_branch")).rfind("graph<then: 1 nodes, ", 0) == 0);
  CHECK(g.parameter_count() == 6);   // w once, though both branches hold a copy
}

TEST_CASE("ref runs the branch the condition picks", "[frontend][control_flow]") {
  Graph g = load(runtime_if());
  CHECK(run_ref(g, true) == std::vector<float>{1, 3, 3, 6, 5, 9});
  CHECK(run_ref(g, false) == std::vector<float>{0, 2, 0, 8, 0, 18});
}

TEST_CASE("a graph with an If round-trips through JSON", "[frontend][control_flow]") {
  Graph g = load(runtime_if());
  Graph back = graph_from_json(graph_to_json(g), "roundtrip.json", ImportOptions{});
  CHECK(back == g);
  CHECK(run_ref(back, false) == run_ref(g, false));
}

TEST_CASE("an If whose condition folds at import is inlined", "[frontend][control_flow]") {
  // y = If(Shape(x)[0] == 1) {then: Squeeze(x, [0]); else: Identity(x)}, x: [1, 4].
  onnx::GraphProto g;
  g.set_name("static_if");
  *g.add_input() = value_info_to_onnx("x", TensorType{DType::f32, {1, 4}});
  auto i64 = [](const std::string& name, int64_t v, Shape shape) {
    auto bytes = std::make_shared<TensorBytes>(8);
    std::memcpy(bytes->data(), &v, 8);
    return tensor_to_onnx(name, Tensor{TensorType{DType::i64, std::move(shape)}, bytes});
  };
  *g.add_initializer() = i64("zero", 0, {});
  *g.add_initializer() = i64("one", 1, {});
  *g.add_initializer() = i64("axes", 0, {1});
  *g.add_node() = node("Shape", {"x"}, {"s"});
  *g.add_node() = node("Gather", {"s", "zero"}, {"d"});
  *g.add_node() = node("Equal", {"d", "one"}, {"c"});
  onnx::NodeProto if_node = node("If", {"c"}, {"y"}, "shape_if");
  *if_node.add_attribute() = graph_attr("then_branch", branch("then", {node("Squeeze", {"x", "axes"}, {"t"})}, "t"));
  *if_node.add_attribute() = graph_attr("else_branch", branch("else", {node("Identity", {"x"}, {"e"})}, "e"));
  *g.add_node() = if_node;
  g.add_output()->set_name("y");
  Graph built = load(model(g));
  CHECK(built.find_node("shape_if") == kNoNode);
  CHECK(built.value(built.outputs[0]).type == TensorType{DType::f32, {4}});
  bool squeeze = false;
  for (const Node& n : built.nodes) squeeze |= n.op == "Squeeze";
  CHECK(squeeze);
}

namespace {

// loop_scan.onnx (tests/inputs/good/make_control_flow_onnx.py): a = Relu(x), b = Sigmoid(x);
// s_final, scans = Loop(4, "", a) {s' = 0.5 s + i w; scan = s' + b}; y = MatMul(s_final, w2).
constexpr const char* kLoopScan = "tests/inputs/good/loop_scan.onnx";

Graph load_file(const std::string& path) {
  ImportOptions options;
  options.warn = [](const std::string&) {};
  return load_model(path, options);
}

// `g` written as tessera JSON and read back, and written as ONNX and read back.
std::pair<Graph, Graph> round_trips(const Graph& g) {
  Graph json = graph_from_json(graph_to_json(g), "roundtrip.json", ImportOptions{});
  testing::TempDir dir;
  const std::string path = dir.file("exported.onnx");
  std::ofstream(path, std::ios::binary) << graph_to_onnx(g).SerializeAsString();
  return {std::move(json), load_file(path)};
}

std::vector<HostTensor> run_loop_scan(const Graph& g, const std::vector<float>& x) {
  std::map<ValueId, HostTensor> bindings;
  bindings[g.find_value("x")] = HostTensor::of<float>(DType::f32, {2, 3}, x);
  std::vector<HostTensor> values = interpret(g, make_ref_kernels(), bindings), outs;
  for (ValueId v : g.outputs) outs.push_back(values[static_cast<size_t>(v)]);
  return outs;
}

}  // namespace

TEST_CASE("a Loop is closed over what its body reads and typed from its inputs", "[frontend][control_flow]") {
  Graph g = load_file(kLoopScan);
  const NodeId id = g.find_node("loop");
  REQUIRE(id != kNoNode);
  const Node& n = g.node(id);
  // trips, no condition, a; then the captured intermediate b (w, an initializer, is copied in).
  REQUIRE(n.inputs.size() == 4);
  CHECK(g.value(n.inputs[0]).name == "trips");
  CHECK(n.inputs[1] == kNoValue);
  CHECK(g.value(n.inputs[2]).name == "a");
  CHECK(g.value(n.inputs[3]).name == "b");
  CHECK(attr_int(n.attrs, "captured_inputs", 0) == 1);
  const Graph* body = attr_graph(n.attrs, "body");
  REQUIRE(body);
  REQUIRE(body->inputs.size() == 4);
  CHECK(body->value(body->inputs[0]).type == TensorType{DType::i64, {}});
  CHECK(body->value(body->inputs[2]).type == TensorType{DType::f32, {2, 3}});
  CHECK(body->value(body->inputs[3]).name == "b");
  CHECK(body->value(body->find_value("w")).is_constant());
  CHECK(g.value(n.outputs[0]).type == TensorType{DType::f32, {2, 3}});
  CHECK(g.value(n.outputs[1]).type == TensorType{DType::f32, {4, 2, 3}});
}

TEST_CASE("ref runs a Loop: carried values, stacked scan outputs, outer values", "[frontend][control_flow]") {
  Graph g = load_file(kLoopScan);
  const std::vector<float> x = {-1, 0.5f, 2, -0.25f, 1, 0};
  std::vector<HostTensor> out = run_loop_scan(g, x);
  // The same by hand: s0 = relu(x); s <- 0.5 s + i w for i = 0..3; scans[i] = s + sigmoid(x).
  const float w[3] = {0.5f, -1, 2};
  std::vector<float> s(6), scans;
  for (size_t k = 0; k < 6; ++k) s[k] = std::max(x[k], 0.0f);
  for (int i = 0; i < 4; ++i)
    for (size_t k = 0; k < 6; ++k) {
      s[k] = s[k] * 0.5f + static_cast<float>(i) * w[k % 3];
      scans.push_back(s[k] + 1 / (1 + std::exp(-x[k])));
    }
  REQUIRE(out[1].type == TensorType{DType::f32, {4, 2, 3}});
  for (size_t k = 0; k < scans.size(); ++k) CHECK(out[1].as<float>()[k] == Approx(scans[k]).margin(1e-6));
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c) {
      float y = 0;
      for (int k = 0; k < 3; ++k) y += s[static_cast<size_t>(r * 3 + k)] * static_cast<float>(k * 4 + c) / 10.0f;
      CHECK(out[0].as<float>()[static_cast<size_t>(r * 4 + c)] == Approx(y).margin(1e-5));
    }
}

TEST_CASE("a graph with a Loop round-trips through JSON and ONNX", "[frontend][control_flow]") {
  Graph g = load_file(kLoopScan);
  const std::vector<float> x = {1, 2, 3, -4, -5, 6};
  auto [back, again] = round_trips(g);
  CHECK(back == g);
  CHECK(attr_int(again.node(again.find_node("loop")).attrs, "captured_inputs", 0) == 1);
  const auto want = run_loop_scan(g, x);
  for (const Graph* other : {&back, &again}) {
    const auto got = run_loop_scan(*other, x);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) CHECK(got[k].bytes == want[k].bytes);
  }
}

TEST_CASE("a Scan is typed from its scan length and round-trips through JSON and ONNX", "[frontend][control_flow]") {
  // scan.onnx (make_control_flow_onnx.py): s0 = Relu(x0) [4]; a [3, 4] along axis 0, b [4, 3] along
  // axis 1 backwards; outputs s_final [4], ys stacked on axis 1 [4, 3], zs reversed [3, 4].
  Graph g = load_file("tests/inputs/good/scan.onnx");
  const Node& n = g.node(g.find_node("scan"));
  REQUIRE(n.inputs.size() == 4);
  CHECK(g.value(n.inputs[3]).name == "c");
  CHECK(attr_int(n.attrs, "captured_inputs", 0) == 1);
  const Graph* body = attr_graph(n.attrs, "body");
  REQUIRE(body);
  for (size_t i = 0; i < 3; ++i) CHECK(body->value(body->inputs[i]).type == TensorType{DType::f32, {4}});
  CHECK(g.value(n.outputs[1]).type == TensorType{DType::f32, {4, 3}});
  CHECK(g.value(n.outputs[2]).type == TensorType{DType::f32, {3, 4}});

  auto run = [](const Graph& graph) {
    std::map<ValueId, HostTensor> bindings;
    bindings[graph.find_value("x0")] = HostTensor::of<float>(DType::f32, {4}, {-1, 0.5f, 2, 0});
    bindings[graph.find_value("a")] = HostTensor::random(TensorType{DType::f32, {3, 4}}, 1);
    bindings[graph.find_value("b")] = HostTensor::random(TensorType{DType::f32, {4, 3}}, 2);
    std::vector<HostTensor> values = interpret(graph, make_ref_kernels(), bindings), outs;
    for (ValueId v : graph.outputs) outs.push_back(values[static_cast<size_t>(v)]);
    return outs;
  };
  // ys[:, 0] is the first state after one step: 0.5 relu(x0) + a[0] b[:, 2] + sigmoid(x0).
  const auto want = run(g);
  const HostTensor a = HostTensor::random(TensorType{DType::f32, {3, 4}}, 1);
  const HostTensor b = HostTensor::random(TensorType{DType::f32, {4, 3}}, 2);
  const float x0[4] = {-1, 0.5f, 2, 0};
  for (size_t i = 0; i < 4; ++i) {
    const float s = 0.5f * std::max(x0[i], 0.0f) + a.as<float>()[i] * b.as<float>()[i * 3 + 2] + 1 / (1 + std::exp(-x0[i]));
    CHECK(want[1].as<float>()[i * 3] == Approx(s).margin(1e-6));
  }
  auto [back, again] = round_trips(g);
  CHECK(back == g);
  for (const Graph* other : {&back, &again}) {
    const auto got = run(*other);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) CHECK(got[k].bytes == want[k].bytes);
  }
}

}  // namespace tessera
