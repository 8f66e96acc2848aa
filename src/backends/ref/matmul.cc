// Matrix products: MatMul (numpy matmul: 1-D promotion, broadcast batch dimensions) and Gemm
// (2-D, optional transposes, alpha/beta, C broadcast to the output).
//
// Plain triple loops accumulating in the element type, in i-k-j order so that the innermost
// loop runs along rows of B and Y. MatMul's batch dimensions broadcast as numpy's do: the output
// batch shape is the broadcast of both batch shapes, and a 1-D operand gains then loses a unit
// dimension (A: [K] -> [1, K]; B: [K] -> [K, 1]).
#include <algorithm>

#include "backends/ref/linear_core.h"
#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

// y[m, n] (+)= sum_k a[m, k] * b[k, n], with row strides for a's transposed access.
template <typename T>
void gemm_block(const T* a, int64_t a_row, int64_t a_col, const T* b, int64_t b_row, int64_t b_col, T* y,
                int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const T av = a[i * a_row + p * a_col];
      for (int64_t j = 0; j < n; ++j) y[i * n + j] += av * b[p * b_row + j * b_col];
    }
}

void matmul_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  Shape as = in[0].type.shape, bs = in[1].type.shape;
  if (as.empty() || bs.empty()) bad_node(n, "MatMul operands must have rank >= 1");
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), nn = bs.back();
  if (bs[bs.size() - 2] != k) bad_node(n, "inner dimensions differ: " + shape_to_string(as) + " x " + shape_to_string(bs));
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const Shape batch_shapes[] = {a_batch, b_batch};
  const Shape batch = broadcast_shapes(n, batch_shapes);
  Shape want = batch;
  if (!a_vec) want.push_back(m);
  if (!b_vec) want.push_back(nn);
  expect_shape(n, out[0], want);
  const std::vector<int64_t> strides[] = {broadcast_strides(a_batch, batch), broadcast_strides(b_batch, batch)};
  visit_dtype(n, in[0].type.dtype, [&]<typename T>() {
    const T* a = in[0].as<T>();
    const T* b = in[1].as<T>();
    T* y = out[0].as<T>();
    std::fill_n(y, out[0].numel(), T(0));
    for_each_broadcast(batch, strides, [&](int64_t i, const int64_t* o) {
      gemm_block(a + o[0] * m * k, k, 1, b + o[1] * k * nn, nn, 1, y + i * m * nn, m, k, nn);
    });
  });
}

void gemm_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 3);
  expect_outputs(n, out, 1, 1);
  const Shape& as = in[0].type.shape;
  const Shape& bs = in[1].type.shape;
  if (as.size() != 2 || bs.size() != 2) bad_node(n, "Gemm operands must be 2-D");
  const bool ta = attr_int(n.attrs, "transA", 0) != 0, tb = attr_int(n.attrs, "transB", 0) != 0;
  const double alpha = attr_float(n.attrs, "alpha", 1.0), beta = attr_float(n.attrs, "beta", 1.0);
  const int64_t m = ta ? as[1] : as[0], k = ta ? as[0] : as[1];
  const int64_t nn = tb ? bs[0] : bs[1];
  if ((tb ? bs[1] : bs[0]) != k) bad_node(n, "inner dimensions differ");
  expect_shape(n, out[0], {m, nn});
  visit_float(n, in[0].type.dtype, [&]<typename T>() {
    T* y = out[0].as<T>();
    std::fill_n(y, m * nn, T(0));
    // Row/column strides of op(A) and op(B) in their stored layouts.
    gemm_block(in[0].as<T>(), ta ? 1 : k, ta ? m : 1, in[1].as<T>(), tb ? 1 : nn, tb ? k : 1, y, m, k, nn);
    for (int64_t i = 0; i < m * nn; ++i) y[i] = static_cast<T>(alpha * y[i]);
    if (!has_input(in, 2) || beta == 0.0) return;
    const Shape& cs = in[2].type.shape;
    const Shape shapes[] = {cs, Shape{m, nn}};
    if (broadcast_shapes(n, shapes) != Shape{m, nn}) bad_node(n, "C does not broadcast to the output");
    const std::vector<int64_t> c_strides[] = {broadcast_strides(cs, {m, nn})};
    const T* c = in[2].as<T>();
    for_each_broadcast({m, nn}, c_strides, [&](int64_t i, const int64_t* o) { y[i] += static_cast<T>(beta * c[o[0]]); });
  });
}

}  // namespace

void matmul_any(const Node& n, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out) {
  const ConstTensorView in[] = {a, b};
  const TensorView outs[] = {out};
  matmul_kernel(n, in, outs);
}

void register_matmul(KernelRegistry& r) {
  r.add("MatMul", matmul_kernel);
  r.add("Gemm", gemm_kernel);
}

}  // namespace tessera::ref
