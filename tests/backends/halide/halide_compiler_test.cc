// halide compiled functions against ref: fused chains, Resize, Softmax, layer norm, pooling, and
// the disk cache (a second compile loads the pipeline without compiling: counted, not timed).
//
// Each function here is one Halide compilation (0.1-1 s), so each test case packs a family of ops
// into one function with several outputs.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "backends/compilers/function_builder.h"
#include "backends/halide/halide_compiler.h"
#include "backends/halide/halide_runtime.h"
#include "support/files.h"
#include "support/temp_dir.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;
using tessera::testing::check_against_ref;
using I = std::vector<int64_t>;

namespace {

// Points the cache at the build tree's test cache, emptied of pipelines (the runtime stays).
struct TestCache {
  TestCache() {
    const std::filesystem::path dir = TESSERA_HALIDE_TEST_CACHE;
    std::filesystem::create_directories(dir);
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().filename().string().rfind("runtime-", 0) != 0) std::filesystem::remove(e.path());
    setenv("TESSERA_HALIDE_CACHE", dir.c_str(), 1);
  }
};
const TestCache test_cache;

ValueId ints(FunctionBuilder& b, const std::string& name, const I& v) {
  return b.constant<int64_t>(name, DType::i64, {static_cast<int64_t>(v.size())}, v);
}

ValueId floats(FunctionBuilder& b, const std::string& name, const std::vector<float>& v) {
  return b.constant<float>(name, DType::f32, {static_cast<int64_t>(v.size())}, v);
}

}  // namespace

TEST_CASE("halide: det-like tail: nearest and linear Resize, skip Add + Relu, HardSwish, Sigmoid, Clip") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {1, 4, 5, 6}), s = b.input("s", {1, 4, 10, 12});
  const ValueId none = kNoValue;
  const ValueId scales = floats(b, "scales", {1.0f, 1.0f, 2.0f, 2.0f});
  const ValueId up = b.node("Resize", {x, none, scales}, {1, 4, 10, 12},
                            {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("asymmetric")},
                             {"nearest_mode", std::string("floor")}});
  b.output(b.node("Relu", {b.node("Add", {up, s}, {1, 4, 10, 12})}, {1, 4, 10, 12}));
  const ValueId scales3 = floats(b, "scales3", {1.0f, 1.0f, 1.5f, 2.5f});   // non-integer: table-driven
  b.output(b.node("Resize", {x, none, scales3}, {1, 4, 7, 15},
                  {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("half_pixel")}}));
  b.output(b.node("Resize", {x, none, scales}, {1, 4, 10, 12},
                  {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("half_pixel")}}));
  const ValueId hs = b.node("HardSwish", {s}, {1, 4, 10, 12});
  const ValueId sg = b.node("Sigmoid", {hs}, {1, 4, 10, 12});
  b.output(b.node("Clip", {b.node("Mul", {sg, s}, {1, 4, 10, 12}), b.scalar("lo", -0.25f), b.scalar("hi", 0.5f)},
                  {1, 4, 10, 12}));
  check_against_ref("halide", b.g);
}

TEST_CASE("halide: attention and encoder tails: Softmax, decomposed LayerNorm, erf-GELU, Reshape/Transpose") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 6, 16}), r = b.input("r", {2, 6, 16});
  const ValueId g = b.input("gamma", {16}), be = b.input("beta", {16});
  // residual Add + layer norm as PyTorch exports it
  const ValueId a = b.node("Add", {x, r}, {2, 6, 16});
  const ValueId axes = ints(b, "axes", {-1});
  const ValueId m = b.node("ReduceMean", {a, axes}, {2, 6, 1});
  const ValueId d = b.node("Sub", {a, m}, {2, 6, 16});
  const ValueId p = b.node("Pow", {d, b.scalar("two", 2.0f)}, {2, 6, 16});
  const ValueId v = b.node("ReduceMean", {p, axes}, {2, 6, 1});
  const ValueId sd = b.node("Sqrt", {b.node("Add", {v, b.scalar("eps", 1e-5f)}, {2, 6, 1})}, {2, 6, 1});
  const ValueId n = b.node("Div", {d, sd}, {2, 6, 16});
  const ValueId ln = b.node("Add", {b.node("Mul", {n, g}, {2, 6, 16}), be}, {2, 6, 16});
  // erf-GELU of the normalized value
  const ValueId e = b.node("Erf", {b.node("Div", {ln, b.scalar("sqrt2", 1.4142135f)}, {2, 6, 16})}, {2, 6, 16});
  const ValueId gelu = b.node("Mul", {b.node("Mul", {ln, b.node("Add", {e, b.scalar("one", 1.0f)}, {2, 6, 16})}, {2, 6, 16}),
                                      b.scalar("half", 0.5f)},
                              {2, 6, 16});
  b.output(gelu);
  // heads: [2,6,16] -> [2,6,4,4] -> [2,4,6,4], scaled softmax over the last axis, back to [2,6,16]
  const ValueId h = b.node("Reshape", {x, ints(b, "hshape", {2, 6, 4, 4})}, {2, 6, 4, 4});
  const ValueId t = b.node("Transpose", {h}, {2, 4, 6, 4}, {{"perm", I{0, 2, 1, 3}}});
  const ValueId sm = b.node("Softmax", {b.node("Mul", {t, b.scalar("scale", 0.5f)}, {2, 4, 6, 4})}, {2, 4, 6, 4});
  const ValueId back = b.node("Transpose", {sm}, {2, 6, 4, 4}, {{"perm", I{0, 2, 1, 3}}});
  b.output(b.node("Reshape", {back, ints(b, "oshape", {2, 6, 16})}, {2, 6, 16}));
  b.output(b.node("LayerNormalization", {r, g, be}, {2, 6, 16}, {{"epsilon", 1e-5}}));
  b.output(b.node("LogSoftmax", {r}, {2, 6, 16}, {{"axis", int64_t{1}}}));
  check_against_ref("halide", b.g);
}

TEST_CASE("halide: pooling, BatchNormalization, Concat, Slice, Pad (constant, reflect, edge)") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 3, 9, 9});
  b.output(b.node("MaxPool", {x}, {2, 3, 5, 5}, {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}}));
  b.output(b.node("MaxPool", {x}, {2, 3, 4, 4}, {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"ceil_mode", int64_t{1}}}));
  for (int64_t include : {0, 1})
    b.output(b.node("AveragePool", {x}, {2, 3, 5, 5},
                    {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}, {"count_include_pad", include}}));
  b.output(b.node("GlobalAveragePool", {x}, {2, 3, 1, 1}));
  std::vector<ValueId> bn{x};
  for (const char* name : {"gamma", "beta", "mean"}) bn.push_back(b.input(name, {3}));
  bn.push_back(floats(b, "var", {0.5f, 1.0f, 2.0f}));
  const ValueId norm = b.node("BatchNormalization", bn, {2, 3, 9, 9});
  const ValueId relu = b.node("Relu", {norm}, {2, 3, 9, 9});
  const ValueId cat = b.node("Concat", {relu, x}, {2, 6, 9, 9}, {{"axis", int64_t{1}}});
  const ValueId sl = b.node("Slice", {cat, ints(b, "starts", {1, 8}), ints(b, "ends", {5, 0}), ints(b, "saxes", {1, 3}),
                                      ints(b, "steps", {1, -2})},
                            {2, 4, 9, 4});
  b.output(b.node("Pad", {sl, ints(b, "pads", {0, 0, 1, 2, 0, 0, 2, 1})}, {2, 4, 12, 7}));
  // reflect and edge modes (reflect's index is an abs(), which Halide types unsigned)
  for (const char* mode : {"reflect", "edge"})
    b.output(b.node("Pad", {x, ints(b, std::string("pads_") + mode, {0, 0, 2, 1, 0, 0, 1, 3})}, {2, 3, 12, 13},
                    {{"mode", std::string(mode)}}));
  check_against_ref("halide", b.g);
}

TEST_CASE("halide: a second compile of one function loads it from the disk cache") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {3, 33}), y = b.input("y", {33});
  b.output(b.node("Tanh", {b.node("Sub", {x, y}, {3, 33})}, {3, 33}));
  const int64_t before = halide::pipelines_compiled();
  check_against_ref("halide", b.g);   // compiles (the test cache holds no pipeline)
  CHECK(halide::pipelines_compiled() == before + 1);
  check_against_ref("halide", b.g);   // a new compiler, the same function: loaded
  CHECK(halide::pipelines_compiled() == before + 1);
  size_t pipelines = 0;
  for (const auto& e : std::filesystem::directory_iterator(TESSERA_HALIDE_TEST_CACHE))
    pipelines += e.path().extension() == ".so" && e.path().filename().string().rfind("runtime-", 0) != 0;
  CHECK(pipelines >= 1);
}

// The runtime is loaded RTLD_GLOBAL by any compile; halide_set_num_threads returns the count it
// replaces, which must be what set_compute_threads set.
TEST_CASE("halide: set_compute_threads sizes the shared Halide runtime's thread pool") {
  FunctionBuilder b;
  b.output(b.node("Neg", {b.input("x", {5})}, {5}));
  auto compiled = make_backend_compiler("halide")->compile(b.g);
  auto set = reinterpret_cast<int (*)(int)>(dlsym(RTLD_DEFAULT, "halide_set_num_threads"));
  REQUIRE(set != nullptr);
  set_compute_threads(3);
  CHECK(set(3) == 3);
  set_compute_threads(1);
  CHECK(set(1) == 1);
}

TEST_CASE("halide: Conv, MatMul and integer tensors are KernelUnsupported, before any compilation") {
  const int64_t before = halide::pipelines_compiled();
  FunctionBuilder b;
  const ValueId a = b.input("a", {4, 8}), w = b.input("w", {8, 2});
  b.output(b.node("MatMul", {a, w}, {4, 2}));
  CHECK_THROWS_AS(make_backend_compiler("halide")->compile(b.g), KernelUnsupported);
  FunctionBuilder c;
  const ValueId i = c.input("i", {4}, DType::i64);
  c.output(c.node("Relu", {i}, {4}));
  CHECK_THROWS_AS(make_backend_compiler("halide")->compile(c.g), KernelUnsupported);
  CHECK(halide::pipelines_compiled() == before);
}

TEST_CASE("halide: publish_shared_object leaves no temporary file behind when emitting or linking fails") {
  tessera::testing::TempDir dir;
  const std::filesystem::path so = dir / "f.so";
  auto garbage = [](const std::filesystem::path& obj) { tessera::testing::write_file(obj, "not an object file"); };
  CHECK_THROWS_AS(halide::publish_shared_object(so, garbage, "test: "), KernelUnsupported);   // the link fails
  auto fails = [](const std::filesystem::path& obj) {
    tessera::testing::write_file(obj, "half written");
    throw std::runtime_error("emit failed");
  };
  CHECK_THROWS_WITH(halide::publish_shared_object(so, fails, "test: "), "emit failed");
  CHECK(std::filesystem::is_empty(dir.path()));
}
