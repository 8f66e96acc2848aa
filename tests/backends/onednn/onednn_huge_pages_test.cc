// onednn: reordered weights pooled on huge pages (onednn_huge_pages.cc). A chain of 1x1 convs
// whose reordered weights pass 2 MiB gets them in one pool advised MADV_HUGEPAGE (where this
// kernel takes the advice), with weights as function inputs (reordered at the first run, into
// the pool) and as constants with data (reordered at build time, then copied into the pool), and
// its results match ref; a function with less than 2 MiB of weights keeps its buffers.
#include <sys/mman.h>

#include <cstdlib>
#include <random>

#include "backends/compilers/function_builder.h"
#include "backends/onednn/onednn_program.h"

using namespace tessera;
using tessera::testing::check_against_ref;
using tessera::testing::FunctionBuilder;

namespace {

// Whether this kernel takes MADV_HUGEPAGE at all (THP built in; "never" still accepts the advice).
bool kernel_takes_advice() {
  constexpr size_t kHuge = size_t{2} << 20;
  void* p = std::aligned_alloc(kHuge, kHuge);
  const bool ok = p != nullptr && madvise(p, kHuge, MADV_HUGEPAGE) == 0;
  std::free(p);
  return ok;
}

size_t huge_page_bytes(const Graph& g) {
  return onednn::OnednnProgram(g, dnnl::engine(dnnl::engine::kind::cpu, 0)).huge_page_bytes();
}

std::vector<float> seeded(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

// x [1, c, 8, 8] -> 1x1 conv to `o` + Relu -> 1x1 conv to `o` (+ bias): weights c*o + o*o floats.
void chain(FunctionBuilder& b, int64_t c, int64_t o, bool constant_weights) {
  const Shape ys{1, o, 8, 8};
  const auto w = [&](const std::string& name, Shape s) {
    if (!constant_weights) return b.input(name, s);
    size_t n = 1;
    for (int64_t d : s) n *= static_cast<size_t>(d);
    return b.constant<float>(name, DType::f32, s, seeded(n, static_cast<unsigned>(n)));
  };
  const ValueId x = b.input("x", {1, c, 8, 8});
  const ValueId h = b.node("Relu", {b.node("Conv", {x, w("w1", {o, c, 1, 1}), w("b1", {o})}, ys)}, ys);
  b.output(b.node("Conv", {h, w("w2", {o, o, 1, 1}), w("b2", {o})}, ys));
}

}  // namespace

TEST_CASE("onednn huge pages: reordered weights past 2 MiB in one pool on huge pages, results unchanged") {
  for (bool constant_weights : {false, true}) {
    INFO("constant weights: " << constant_weights);
    FunctionBuilder b;
    chain(b, 256, 1024, constant_weights);   // 1 MiB + 4 MiB of weights
    check_against_ref("onednn", b.g, 1e-4);
    if (kernel_takes_advice()) CHECK(huge_page_bytes(b.g) >= size_t{5} << 20);
  }
}

TEST_CASE("onednn huge pages: less than 2 MiB of weights keeps its buffers") {
  FunctionBuilder b;
  chain(b, 64, 256, true);   // 64 KiB + 256 KiB
  check_against_ref("onednn", b.g, 1e-4);
  CHECK(huge_page_bytes(b.g) == 0);
}
