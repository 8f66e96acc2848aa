// ONNX Runtime's com.microsoft quantized element-wise ops and pooling: QLinearAdd, QLinearMul,
// QLinearSigmoid, QLinearGlobalAveragePool (ONNX Runtime's ContribOperators.md).
//
// Each is its float op between a dequantize and a quantize, all per tensor, in float32:
//
//   QLinearAdd|Mul(A, a_s, a_zp, B, b_s, b_zp, c_s, c_zp)  C = q(dq(A) + | * dq(B)), numpy broadcasting
//   QLinearSigmoid(X, x_s, x_zp, y_s, y_zp)                 Y = q(sigmoid(dq(X)))
//   QLinearGlobalAveragePool(X, x_s, x_zp, y_s, y_zp)       Y = q(mean over the spatial positions of dq(X))
//
// with dq(v) = (v - zp) * s and q(r) = saturate(round_half_even(r / s) + zp) (quant_util.h);
// a missing zero point is 0 of the data's type. The pooling sums the shifted integers exactly
// and scales once, as ONNX Runtime does: y = q'((sum(X) - count * x_zp) * x_s / count).
// QLinearGlobalAveragePool's channels_last = 1 reads [N, spatial..., C] and writes [N, 1..., C].
#include <cmath>

#include "backends/ref/quant_util.h"
#include "backends/ref/ref_kernels.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

// A per-tensor scale and zero point; the zero point must have the data's dtype.
struct TensorQuant {
  float scale;
  int32_t zero_point;
  float dequantize(int32_t v) const { return static_cast<float>(v - zero_point) * scale; }
};

TensorQuant tensor_quant(const Node& n, Inputs in, size_t scale, size_t zp, DType data, const char* what) {
  const ConstTensorView z = has_input(in, zp) ? in[zp] : ConstTensorView::missing();
  const QuantParams p = read_quant_params(n, in[scale], z, Shape{}, 0);
  if (p.scale.size() != 1) bad_node(n, std::string(what) + " must be quantized per tensor");
  read_zero_points(n, z, data, 1, what);  // checks the zero point's dtype
  return {p.scale[0], p.zero_point[0]};
}

template <bool Multiply>
void qlinear_binary_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 7, 8);
  expect_outputs(n, out, 1, 1);
  const ConstTensorView& a = in[0];
  const ConstTensorView& b = in[3];
  if (b.type.dtype != a.type.dtype || out[0].type.dtype != a.type.dtype) bad_node(n, "A, B and C must have one dtype");
  const TensorQuant qa = tensor_quant(n, in, 1, 2, a.type.dtype, "A");
  const TensorQuant qb = tensor_quant(n, in, 4, 5, a.type.dtype, "B");
  const TensorQuant qc = tensor_quant(n, in, 6, 7, a.type.dtype, "C");
  const Shape shapes[] = {a.type.shape, b.type.shape};
  const Shape shape = broadcast_shapes(n, shapes);
  expect_shape(n, out[0], shape);
  const std::vector<int64_t> strides[] = {broadcast_strides(a.type.shape, shape), broadcast_strides(b.type.shape, shape)};
  visit_quantized(n, a.type.dtype, [&]<typename Q>() {
    const Q* x = a.as<Q>();
    const Q* y = b.as<Q>();
    Q* c = out[0].as<Q>();
    for_each_broadcast(shape, strides, [&](int64_t i, const int64_t* o) {
      const float u = qa.dequantize(x[o[0]]), v = qb.dequantize(y[o[1]]);
      c[i] = saturate_round<Q>((Multiply ? u * v : u + v) / qc.scale, qc.zero_point);
    });
  });
}

void qlinear_sigmoid_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 4, 5);
  expect_outputs(n, out, 1, 1);
  const ConstTensorView& x = in[0];
  expect_shape(n, out[0], x.type.shape);
  if (out[0].type.dtype != x.type.dtype) bad_node(n, "X and Y must have one dtype");
  const TensorQuant qx = tensor_quant(n, in, 1, 2, x.type.dtype, "X");
  const TensorQuant qy = tensor_quant(n, in, 3, 4, x.type.dtype, "Y");
  visit_quantized(n, x.type.dtype, [&]<typename Q>() {
    const Q* v = x.as<Q>();
    Q* y = out[0].as<Q>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float s = 1.0f / (1.0f + std::exp(-qx.dequantize(v[i])));
      y[i] = saturate_round<Q>(s / qy.scale, qy.zero_point);
    }
  });
}

void qlinear_global_average_pool_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 5, 5);
  expect_outputs(n, out, 1, 1);
  const ConstTensorView& x = in[0];
  const Shape& xs = x.type.shape;
  if (xs.size() < 3) bad_node(n, "X must have rank >= 3");
  if (out[0].type.dtype != x.type.dtype) bad_node(n, "X and Y must have one dtype");
  const bool channels_last = attr_int(n.attrs, "channels_last", 0) != 0;
  const size_t channel_axis = channels_last ? xs.size() - 1 : 1;
  Shape want(xs.size(), 1);
  want[0] = xs[0];
  want[channel_axis] = xs[channel_axis];
  expect_shape(n, out[0], want);
  const TensorQuant qx = tensor_quant(n, in, 1, 2, x.type.dtype, "X");
  const TensorQuant qy = tensor_quant(n, in, 3, 4, x.type.dtype, "Y");
  const int64_t batch = xs[0], channels = xs[channel_axis], count = x.numel() / std::max<int64_t>(batch * channels, 1);
  // Element (b, c, p) of p in [0, count): offset b * count * C + (channels_last ? p * C + c : c * count + p).
  const int64_t c_stride = channels_last ? 1 : count, p_stride = channels_last ? channels : 1;
  const double multiplier = static_cast<double>(qx.scale) / (static_cast<double>(qy.scale) * static_cast<double>(count));
  visit_quantized(n, x.type.dtype, [&]<typename Q>() {
    const Q* v = x.as<Q>();
    Q* y = out[0].as<Q>();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t c = 0; c < channels; ++c) {
        int64_t sum = 0;
        for (int64_t p = 0; p < count; ++p) sum += v[b * count * channels + c * c_stride + p * p_stride];
        y[b * channels + c] = saturate_round<Q>(static_cast<double>(sum - count * qx.zero_point) * multiplier, qy.zero_point);
      }
  });
}

}  // namespace

void register_qlinear_elementwise(KernelRegistry& r) {
  r.add("QLinearAdd", qlinear_binary_kernel<false>);
  r.add("QLinearMul", qlinear_binary_kernel<true>);
  r.add("QLinearSigmoid", qlinear_sigmoid_kernel);
  r.add("QLinearGlobalAveragePool", qlinear_global_average_pool_kernel);
}

}  // namespace tessera::ref
