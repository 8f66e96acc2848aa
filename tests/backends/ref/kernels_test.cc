// ref kernels against hand-computed values: the cases where an index mistake would hide in
// ONNX's node tests (groups with padding, transposed operands, broadcasting, a non-last axis).
#include <catch2/catch.hpp>

#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "backends/ref/kernel_runner.h"

using namespace tessera;

namespace {

// Runs `op` on `inputs` into one output of type `out`.
HostTensor run1(const std::string& op, Attributes attrs, const std::vector<HostTensor>& inputs, TensorType out) {
  return std::move(testing::run_ref_kernel(op, std::move(attrs), inputs, {std::move(out)}).front());
}

HostTensor f32(Shape s, std::vector<float> v) { return HostTensor::of<float>(DType::f32, std::move(s), v); }

std::vector<float> values(const HostTensor& t) { return {t.as<float>().begin(), t.as<float>().end()}; }

}  // namespace

TEST_CASE("Conv with two groups and padding 1 sums each group's channels only") {
  // X: 1x2x2x2, channel 0 = [1 2; 3 4], channel 1 = [10 20; 30 40]. W: 2 filters of 1x2x2 (one
  // input channel each): filter 0 = all ones, filter 1 = [1 0; 0 -1]. pads 1, stride 1 -> 3x3.
  const auto x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  const auto w = f32({2, 1, 2, 2}, {1, 1, 1, 1, 1, 0, 0, -1});
  const auto b = f32({2}, {0.5f, -1});
  const auto y = run1("Conv", {{"group", int64_t{2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}, {x, w, b},
                      {DType::f32, {1, 2, 3, 3}});
  // Group 0, all-ones 2x2 window sums over the zero-padded channel 0.
  // Group 1: y[i,j] = x[i-1, j-1] - x[i, j] on channel 1 (zero outside).
  CHECK(values(y) == std::vector<float>{1.5f, 3.5f, 2.5f, 4.5f, 10.5f, 6.5f, 3.5f, 7.5f, 4.5f,
                                        -11, -21, -1, -31, -31, 19, -1, 29, 39});
}

TEST_CASE("Conv rejects an output shape it would not compute") {
  const auto x = f32({1, 1, 3, 3}, std::vector<float>(9, 1));
  const auto w = f32({1, 1, 2, 2}, std::vector<float>(4, 1));
  CHECK_THROWS_AS(run1("Conv", {}, {x, w}, {DType::f32, {1, 1, 3, 3}}), KernelError);
}

TEST_CASE("Gemm with transB, alpha, beta and a broadcast row bias") {
  // A 2x3, B stored 2x3 (transB -> 3x2), C 1x2. Y = 2 * A B^T + 0.5 * C.
  const auto a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = f32({2, 3}, {1, 0, -1, 2, 1, 0});
  const auto c = f32({1, 2}, {10, 20});
  const auto y = run1("Gemm", {{"transB", int64_t{1}}, {"alpha", 2.0}, {"beta", 0.5}}, {a, b, c}, {DType::f32, {2, 2}});
  // A B^T = [1-3, 2+2; 4-6, 8+5] = [-2 4; -2 13]
  CHECK(values(y) == std::vector<float>{-4 + 5, 8 + 10, -4 + 5, 26 + 10});
}

TEST_CASE("Add broadcasts [2,1,3] with [4,1] to [2,4,3]") {
  const auto a = f32({2, 1, 3}, {0, 1, 2, 100, 101, 102});
  const auto b = f32({4, 1}, {0, 10, 20, 30});
  const auto y = run1("Add", {}, {a, b}, {DType::f32, {2, 4, 3}});
  const auto v = values(y);
  REQUIRE(v.size() == 24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) CHECK(v[static_cast<size_t>((i * 4 + j) * 3 + k)] == float(100 * i + k + 10 * j));
  CHECK_THROWS_AS(run1("Add", {}, {a, f32({2}, {1, 2})}, {DType::f32, {2, 1, 3}}), KernelError);
}

TEST_CASE("Add on i64 shape tensors stays integral") {
  const auto a = HostTensor::of<int64_t>(DType::i64, {3}, {1, 2, 3});
  const auto b = HostTensor::of<int64_t>(DType::i64, {}, {int64_t{1} << 40});
  const auto y = run1("Add", {}, {a, b}, {DType::i64, {3}});
  CHECK(std::vector<int64_t>(y.as<int64_t>().begin(), y.as<int64_t>().end()) ==
        std::vector<int64_t>{(int64_t{1} << 40) + 1, (int64_t{1} << 40) + 2, (int64_t{1} << 40) + 3});
}

TEST_CASE("Softmax normalizes along axis 0 only (opset 13)") {
  // 2x2: columns are independent; softmax([0, ln 3]) = [1/4, 3/4].
  const float l3 = std::log(3.0f);
  const auto x = f32({2, 2}, {0, 5, l3, 5});
  const auto y = run1("Softmax", {{"axis", int64_t{0}}}, {x}, {DType::f32, {2, 2}});
  const auto v = values(y);
  CHECK(v[0] == Approx(0.25f));
  CHECK(v[2] == Approx(0.75f));
  CHECK(v[1] == Approx(0.5f));
  CHECK(v[3] == Approx(0.5f));
}

TEST_CASE("MaxPool writes Indices and skips padding") {
  const auto x = f32({1, 1, 2, 2}, {-4, -3, -2, -1});
  Node n;
  n.name = "pool";
  n.op = "MaxPool";
  n.attrs = {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 0, 0}}};
  HostTensor y({DType::f32, {1, 1, 2, 2}}), idx({DType::i64, {1, 1, 2, 2}});
  const ConstTensorView ins[] = {x.view()};
  const TensorView outs[] = {y.view(), idx.view()};
  testing::ref_kernel_registry().run(n, ins, outs);
  CHECK(values(y) == std::vector<float>{-4, -3, -2, -1});  // padding is not a zero
  CHECK(std::vector<int64_t>(idx.as<int64_t>().begin(), idx.as<int64_t>().end()) == std::vector<int64_t>{0, 1, 2, 3});
}

TEST_CASE("KernelRegistry reports missing and duplicate kernels") {
  KernelRegistry r("test");
  r.add("Relu", *testing::ref_kernel_registry().find("Relu"));
  CHECK(r.supports("Relu"));
  CHECK_FALSE(r.supports("Conv"));
  CHECK_THROWS_AS(r.add("Relu", *testing::ref_kernel_registry().find("Relu")), KernelError);
  Node n;
  n.op = "Conv";
  CHECK_THROWS_AS(r.run(n, {}, {}), KernelUnsupported);
}

TEST_CASE("HostTensor::random is seeded, per dtype ranges hold") {
  const TensorType t{DType::f32, {64}};
  CHECK(HostTensor::random(t, 7).bytes == HostTensor::random(t, 7).bytes);
  CHECK(HostTensor::random(t, 7).bytes != HostTensor::random(t, 8).bytes);
  const HostTensor floats = HostTensor::random(t, 1), ints = HostTensor::random({DType::i64, {64}}, 1);
  for (float v : floats.as<float>()) CHECK((v >= -1 && v < 1));
  for (int64_t v : ints.as<int64_t>()) CHECK((v >= 0 && v < 10));
  CHECK(half_to_float(float_to_half(0.333f)) == Approx(0.333f).epsilon(1e-3));
  CHECK(half_to_float(float_to_half(1e-6f)) == Approx(1e-6f).epsilon(0.05));
}

TEST_CASE("interpret runs a Graph node by node") {
  Graph g;
  const ValueId x = g.add_value({"x", {DType::f32, {3}}, ValueKind::Input});
  g.inputs.push_back(x);
  const ValueId h = g.add_value({"h", {DType::f32, {3}}});
  const ValueId y = g.add_value({"y", {DType::f32, {3}}});
  g.add_node({"neg", "Neg", "", {}, {x}, {h}});
  g.add_node({"relu", "Relu", "", {}, {h}, {y}});
  g.outputs.push_back(y);
  std::map<ValueId, HostTensor> bind;
  bind.emplace(x, f32({3}, {-1, 2, -3}));
  const auto out = interpret(g, testing::ref_kernel_registry(), bind);
  CHECK(values(out[static_cast<size_t>(y)]) == std::vector<float>{1, 0, 3});
}

TEST_CASE("OneHot puts `on` at each index along a new axis (no node test imports: depth is data)") {
  const auto idx = HostTensor::of<int64_t>(DType::i64, {2}, {1, -1});
  const auto depth = f32({}, {3});
  const auto vals = f32({2}, {0, 5});
  const auto y = run1("OneHot", {{"axis", int64_t{0}}}, {idx, depth, vals}, {DType::f32, {3, 2}});
  CHECK(values(y) == std::vector<float>{0, 0, 5, 0, 0, 5});  // column 0: index 1; column 1: index 2
}
