// The dtypes a backend takes (dtype_support.h): parsed from its spec, and applied to the seeds of
// its partition rule so that no candidate holds a tensor of another dtype.
#include <catch2/catch.hpp>

#include "support/graph_builder.h"
#include "tessera/backend_spec.h"
#include "backends/spec/backend_spec_detail.h"
#include "backends/spec/candidate_space.h"
#include "tessera/error.h"

using namespace tessera;
using tessera::testing::GraphBuilder;

namespace {

BackendSpec spec_with(const std::string& dtypes) {
  return parse_backend_spec(R"({"format": "tessera.backend", "version": 1, "name": "b", "ops": ["Relu", "Add", "Gather", "Cast"],
                                "fusion": "tvm", "dtypes": )" + dtypes + "}",
                            "b.json");
}

// x(f16) -> Cast -> f32 -> Relu -> Add(., w f32 weight) -> Gather(., i: i64 computed by Cast)
Graph mixed_graph() {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 4}, DType::f16);
  const ValueId h = b.op("Relu", "h", {x}, {4, 4});
  b.g.value(h).type.dtype = DType::f16;
  const ValueId f = b.op("Cast", "f", {h}, {4, 4}, {{"to", int64_t{1}}});
  const ValueId r = b.op("Relu", "r", {f}, {4, 4});
  const ValueId w = b.constant<float>("w", DType::f32, {4, 4}, std::vector<float>(16, 0.5f));
  const ValueId a = b.op("Add", "a", {r, w}, {4, 4});
  const ValueId fi = b.input("fi", {2}, DType::f32);
  const ValueId i = b.op("Cast", "i", {fi}, {2}, {{"to", int64_t{7}}});
  b.g.value(i).type.dtype = DType::i64;
  b.output(b.op("Gather", "g", {a, i}, {2, 4}));
  return b.g;
}

std::vector<std::string> nodes_of(const Graph& g, const BackendCandidates& bc) {
  std::vector<std::string> names;
  for (const Candidate& c : bc.candidates) c.inside().for_each([&](int n) { names.push_back(g.node(n).name); });
  return names;
}

}  // namespace

TEST_CASE("dtypes: a backend gets no candidate holding a tensor of a dtype it does not take", "[dtypes]") {
  const Graph g = mixed_graph();
  DataflowIndex index(g);
  const BackendSpec f32_only = spec_with(R"(["f32"])");
  CandidateSpace space = enumerate_candidates(index, {f32_only});
  const BackendCandidates& bc = space.per_backend[0];
  const std::vector<std::string> names = nodes_of(g, bc);
  // h (f16 in and out), f (reads f16) and i (writes i64), g (reads the computed i64) are refused;
  // r and a, fused or not, remain, and a's f32 weight is a tensor it takes.
  for (const char* refused : {"h", "f", "i", "g"}) CHECK(std::count(names.begin(), names.end(), refused) == 0);
  CHECK(std::count(names.begin(), names.end(), "r") > 0);
  CHECK(std::count(names.begin(), names.end(), "a") > 0);
  CHECK(bc.stats.rejections.at("f16 tensor on Relu (takes f32)") == 1);
  CHECK(bc.stats.rejections.at("i64 tensor on Gather (takes f32)") == 1);
  CHECK(bc.rule.find("DTypes[f32]") != std::string::npos);

  // Without "dtypes" every node is a seed, as before the field existed.
  const BackendSpec all = parse_backend_spec(R"({"format": "tessera.backend", "version": 1, "name": "b",
                                                 "ops": ["Relu", "Add", "Gather", "Cast"]})", "b.json");
  CHECK(all.detail().dtypes.all);
  const std::vector<std::string> every = nodes_of(g, enumerate_candidates(index, {all}).per_backend[0]);
  CHECK(std::count(every.begin(), every.end(), "h") == 1);
}

TEST_CASE("dtypes: per-op lists and the built-in backends' declarations", "[dtypes]") {
  const Graph g = mixed_graph();
  DataflowIndex index(g);
  const BackendSpec spec = spec_with(R"({"*": ["f32"], "Cast": ["f32", "f16", "i64"], "Relu": ["f16", "f32"]})");
  const std::vector<std::string> names = nodes_of(g, enumerate_candidates(index, {spec}).per_backend[0]);
  for (const char* taken : {"h", "f", "i", "r", "a"}) CHECK(std::count(names.begin(), names.end(), taken) > 0);
  CHECK(std::count(names.begin(), names.end(), "g") == 0);

  // ref takes every dtype; the f32 backends take f16 and bf16 by widening, never i64 tensors.
  CHECK(builtin_backend_spec("ref").detail().dtypes.all);
  for (const char* name : {"onednn", "xnnpack", "eigen", "blas", "halide", "onednn_bf16", "onednn_int8"}) {
    const DTypeSupport d = builtin_backend_spec(name).detail().dtypes;
    INFO(name);
    CHECK_FALSE(d.all);
    CHECK(d.default_dtypes == std::vector<DType>{DType::f32, DType::f16, DType::bf16});
  }
  const BackendSpec onednn = builtin_backend_spec("onednn");
  const std::vector<std::string> on = nodes_of(g, enumerate_candidates(index, {onednn}).per_backend[0]);
  CHECK(std::count(on.begin(), on.end(), "h") > 0);   // f16 Relu: widened to f32 when compiled
  CHECK(std::count(on.begin(), on.end(), "r") > 0);
}

TEST_CASE("dtypes: a bad declaration is a one-line user error naming the field", "[dtypes]") {
  auto message = [](const std::string& dtypes) {
    try {
      spec_with(dtypes);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(R"(["f33"])").find("dtypes[0]: unknown dtype \"f33\"") != std::string::npos);
  CHECK(message(R"([])").find("dtypes: expected a non-empty list") != std::string::npos);
  CHECK(message(R"("f32")").find("dtypes: expected a list of dtype names") != std::string::npos);
  CHECK(message(R"({"Relu": ["f32"]})").find("dtypes: missing \"*\"") != std::string::npos);
  CHECK(message(R"({"*": ["f32"], "Relux": ["f32"]})").find("dtypes.Relux") != std::string::npos);
}

TEST_CASE("dtypes: an operand's own list applies to it, constants included", "[dtypes]") {
  // x(f32) -> Add(x, w: u8 constant) and Add(x, v: i8 constant): Add[1] takes i8 only.
  GraphBuilder b;
  const ValueId x = b.input("x", {4}, DType::f32);
  const ValueId w = b.constant<uint8_t>("w", DType::u8, {4}, std::vector<uint8_t>(4, 1));
  const ValueId v = b.constant<int8_t>("v", DType::i8, {4}, std::vector<int8_t>(4, 1));
  const ValueId a = b.op("Add", "a", {x, w}, {4});
  b.output(b.op("Add", "c", {a, v}, {4}));
  const Graph g = b.g;
  DataflowIndex index(g);
  const BackendSpec spec = spec_with(R"({"*": ["f32"], "Add[1]": ["i8"]})");
  const CandidateSpace space = enumerate_candidates(index, {spec});
  const BackendCandidates& bc = space.per_backend[0];
  const std::vector<std::string> names = nodes_of(g, bc);
  CHECK(std::count(names.begin(), names.end(), "a") == 0);   // u8 operand 1 (a constant the op's list would skip)
  CHECK(std::count(names.begin(), names.end(), "c") > 0);    // i8 operand 1; operand 0 still f32 by "*"
  CHECK(bc.stats.rejections.at("u8 operand 1 of Add (takes i8)") == 1);
  CHECK(spec.detail().dtypes.describe() == "f32; Add[1]: i8");

  // The built-in onednn spec: s8 filters only for its int8 convolutions and matmuls.
  const DTypeSupport onednn = builtin_backend_spec("onednn").detail().dtypes;
  CHECK(onednn.per_input.at("QLinearConv").at(3) == std::vector<DType>{DType::i8});
  CHECK(onednn.per_input.at("QLinearMatMul").at(3) == std::vector<DType>{DType::i8});

  auto message = [](const std::string& dtypes) {
    try {
      spec_with(dtypes);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(R"({"*": ["f32"], "Add[x]": ["f32"]})").find("dtypes.Add[x]: expected an op name or Op[i]") != std::string::npos);
  CHECK(message(R"({"*": ["f32"], "Add[1": ["f32"]})").find("dtypes.Add[1: expected an op name or Op[i]") != std::string::npos);
  CHECK(message(R"({"*": ["f32"], "Addx[1]": ["f32"]})").find("dtypes.Addx[1]") != std::string::npos);
}
