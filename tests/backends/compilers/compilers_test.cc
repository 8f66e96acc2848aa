// make_backend_compiler, set_compute_threads and the ref compiler (against the interpreter).
#include <omp.h>

#include "backends/compilers/function_builder.h"
#include "backends/ref/interpreter.h"
#include "backends/ref/ref_kernels.h"
#include "tessera/error.h"

using namespace tessera;
using tessera::testing::FunctionBuilder;

TEST_CASE("make_backend_compiler knows the built-in real backends") {
  CHECK(backend_compiler_names() ==
        std::vector<std::string>{"blas", "eigen", "halide", "onednn", "onednn_bf16", "onednn_int8", "ref", "xnnpack"});
  for (const std::string& name : backend_compiler_names()) {
    auto c = make_backend_compiler(name);
    CHECK(c->name() == name);
    CHECK_FALSE(c->version().empty());
  }
  CHECK_THROWS_AS(make_backend_compiler("tvm"), UserError);
}

TEST_CASE("set_compute_threads sets OpenMP and is reported back") {
  set_compute_threads(1);
  CHECK(omp_get_max_threads() == 1);
  CHECK(compute_threads() == 1);
  set_compute_threads(2);
  CHECK(omp_get_max_threads() == 2);
  CHECK_THROWS(set_compute_threads(0));
  set_compute_threads(1);
}

TEST_CASE("ref compiler computes what the interpreter computes") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {2, 3, 5, 5}), w = b.input("w", {4, 3, 3, 3});
  const ValueId c = b.node("Conv", {x, w}, {2, 4, 5, 5}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const ValueId r = b.node("Relu", {c}, {2, 4, 5, 5});
  const ValueId p = b.node("MaxPool", {r}, {2, 4, 2, 2}, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                                          {"strides", std::vector<int64_t>{2, 2}}});
  b.output(p);
  b.output(c);   // a tap: also read inside
  auto out = tessera::testing::run_compiled(*make_backend_compiler("ref"), b.g);
  std::map<ValueId, HostTensor> bindings{{x, HostTensor::random(b.g.value(x).type, 1)},
                                         {w, HostTensor::random(b.g.value(w).type, 2)}};
  auto all = interpret(b.g, make_ref_kernels(), bindings);
  CHECK(out.outputs[0].bytes == all[static_cast<size_t>(p)].bytes);
  CHECK(out.outputs[1].bytes == all[static_cast<size_t>(c)].bytes);
}

TEST_CASE("compiled functions check their signature") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {4});
  b.output(b.node("Relu", {x}, {4}));
  auto fn = make_backend_compiler("ref")->compile(b.g);
  HostTensor wrong(TensorType{DType::f32, {5}}), y(TensorType{DType::f32, {4}});
  std::vector<ConstTensorView> ins{std::as_const(wrong).view()};
  std::vector<TensorView> outs{y.view()};
  CHECK_THROWS_AS(fn->run(ins, outs), KernelError);
}

TEST_CASE("ref compiler: an op without a ref kernel is KernelUnsupported") {
  FunctionBuilder b;
  const ValueId x = b.input("x", {4});
  b.output(b.node("NoSuchOp", {x}, {4}));
  CHECK_THROWS_AS(make_backend_compiler("ref")->compile(b.g), KernelUnsupported);
}
