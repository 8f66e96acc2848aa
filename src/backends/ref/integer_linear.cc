// Integer convolution and matrix products: ConvInteger, MatMulInteger (int32 results),
// QLinearConv, QLinearMatMul (requantized 8-bit results), and ONNX Runtime's com.microsoft
// MatMulIntegerToFloat and DynamicQuantizeMatMul (float results: acc * a_scale * b_scale + bias,
// the latter quantizing its float A as DynamicQuantizeLinear does).
//
// Every one is the float op's loop over zero-point-shifted integers (linear_core.h):
//
//   acc = Conv|MatMul(int32(x) - x_zp, int32(w) - w_zp) [+ B]          int32, exact
//   ConvInteger, MatMulInteger:  y = acc
//   QLinearConv, QLinearMatMul:  y = saturate(round(acc * (x_scale * w_scale / y_scale)) + y_zp)
//
// Zero points and scales: x's (and MatMul's A's) per tensor or, for the MatMuls, per row of A;
// the weight's per tensor or per output channel (Conv: W's first dimension; MatMul: B's last,
// one per column); y's per tensor. Padding in a convolution reads the zero point, so it adds 0
// to acc. The multiplier is computed in float32 and applied in double, as ONNX's reference does
// (numpy: int32 * float32 -> float64); rounding and saturation are quant_util.h's.
#include "backends/ref/linear_core.h"
#include "backends/ref/quant_util.h"
#include "backends/ref/ref_kernels.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

void expect_quantized(const Node& n, const ConstTensorView& v, const char* what) {
  if (v.type.dtype != DType::u8 && v.type.dtype != DType::i8)
    unsupported(n, std::string(what) + " of dtype " + std::string(dtype_name(v.type.dtype)) + " (ref: uint8, int8)");
}

// Scale values of a QLinear op's input: one, or `size` (per row / per channel).
std::vector<float> read_scales(const Node& n, const ConstTensorView& s, int64_t size, const char* what) {
  if (s.type.dtype != DType::f32) unsupported(n, std::string(what) + " of dtype " + std::string(dtype_name(s.type.dtype)));
  if (s.type.rank() > 1 || (s.numel() != 1 && s.numel() != size))
    bad_node(n, std::string(what) + " has shape " + shape_to_string(s.type.shape) + ", expected a scalar or " +
                    std::to_string(size) + " values");
  std::vector<float> out(s.as<float>(), s.as<float>() + s.numel());
  for (float v : out)
    if (!(v > 0.0f) || !std::isfinite(v)) bad_node(n, std::string(what) + " " + std::to_string(v) + " is not positive and finite");
  return out;
}

// The convolution's int32 accumulator into `acc` (zero points and bias may be missing views).
void conv_accumulate(const Node& n, const ConstTensorView& x, const ConstTensorView& x_zp, const ConstTensorView& w,
                     const ConstTensorView& w_zp, const ConstTensorView& bias, const TensorView& acc) {
  expect_quantized(n, x, "input");
  expect_quantized(n, w, "weight");
  if (w.type.rank() < 1) bad_node(n, "the weight has rank 0");
  const int64_t filters = w.type.shape[0];
  const HostTensor xs = widen_shifted(n, x, read_zero_points(n, x_zp, x.type.dtype, 1, "x_zero_point"), 1);
  const HostTensor ws = widen_shifted(n, w, read_zero_points(n, w_zp, w.type.dtype, filters, "w_zero_point"),
                                filters == 0 ? 1 : w.numel() / filters);
  if (bias.present && (bias.type.dtype != DType::i32 || bias.type.shape != Shape{filters}))
    bad_node(n, "bias is " + to_string(bias.type) + ", expected int32 with " + std::to_string(filters) + " values");
  const ConstTensorView in[] = {xs.view(), ws.view(), bias.present ? bias : ConstTensorView::missing()};
  conv_int32(n, in, acc);
}

// Rows of A ([..., M, K], or [K]) and columns of B ([..., K, N], or [K]).
int64_t rows_of(const Shape& a) { return a.size() < 2 ? 1 : a[a.size() - 2]; }
int64_t cols_of(const Shape& b) { return b.size() < 2 ? 1 : b.back(); }

// The matrix product's int32 accumulator into `acc`, A's zero point per row, B's per column.
void matmul_accumulate(const Node& n, const ConstTensorView& a, const ConstTensorView& a_zp, const ConstTensorView& b,
                       const ConstTensorView& b_zp, const TensorView& acc) {
  expect_quantized(n, a, "A");
  expect_quantized(n, b, "B");
  if (a.type.rank() < 1 || b.type.rank() < 1) bad_node(n, "operands must have rank >= 1");
  const HostTensor as = widen_shifted(n, a, read_zero_points(n, a_zp, a.type.dtype, rows_of(a.type.shape), "a_zero_point"),
                                a.type.shape.back());
  const HostTensor bs = widen_shifted(n, b, read_zero_points(n, b_zp, b.type.dtype, cols_of(b.type.shape), "b_zero_point"), 1);
  matmul_any(n, as.view(), bs.view(), acc);
}

// y[i] = saturate(round(acc[i] * a_scale[row] * b_scale[col] / y_scale) + y_zp), where row and
// col are (i / row_inner) % rows and (i / col_inner) % cols (per-tensor scales have one value).
void requantize(const Node& n, const HostTensor& acc, const std::vector<float>& a_scale, int64_t row_inner,
                const std::vector<float>& b_scale, int64_t col_inner, const ConstTensorView& y_scale,
                const ConstTensorView& y_zp, const TensorView& y) {
  const float ys = read_scales(n, y_scale, 1, "y_scale")[0];
  if (!y_zp.present) bad_node(n, "y_zero_point is missing");
  if (y.type.dtype != y_zp.type.dtype) bad_node(n, "output dtype differs from y_zero_point's");
  const int32_t zp = read_zero_points(n, y_zp, y_zp.type.dtype, 1, "y_zero_point")[0];
  const auto rows = static_cast<int64_t>(a_scale.size()), cols = static_cast<int64_t>(b_scale.size());
  const int32_t* v = acc.view().as<int32_t>();
  visit_quantized(n, y.type.dtype, [&]<typename Q>() {
    Q* out = y.as<Q>();
    for (int64_t i = 0; i < y.numel(); ++i) {
      const float as = a_scale[rows == 1 ? 0 : static_cast<size_t>((i / row_inner) % rows)];
      const float bs = b_scale[cols == 1 ? 0 : static_cast<size_t>((i / col_inner) % cols)];
      const float multiplier = as * bs / ys;
      out[i] = saturate_round<Q>(static_cast<double>(v[i]) * static_cast<double>(multiplier), zp);
    }
  });
}

void expect_int32_output(const Node& n, const TensorView& y) {
  if (y.type.dtype != DType::i32) bad_node(n, "output must be int32, is " + to_string(y.type));
}

ConstTensorView optional(Inputs in, size_t i) { return has_input(in, i) ? in[i] : ConstTensorView::missing(); }

void conv_integer_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 4);
  expect_outputs(n, out, 1, 1);
  expect_int32_output(n, out[0]);
  conv_accumulate(n, in[0], optional(in, 2), in[1], optional(in, 3), ConstTensorView::missing(), out[0]);
}

void matmul_integer_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 4);
  expect_outputs(n, out, 1, 1);
  expect_int32_output(n, out[0]);
  matmul_accumulate(n, in[0], optional(in, 2), in[1], optional(in, 3), out[0]);
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp [, B]).
void qlinear_conv_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 8, 9);
  expect_outputs(n, out, 1, 1);
  const Shape& ys = out[0].type.shape;
  HostTensor acc(TensorType{DType::i32, ys});
  conv_accumulate(n, in[0], in[2], in[3], in[5], optional(in, 8), acc.view());
  const int64_t filters = in[3].type.shape[0];
  const std::vector<float> x_scale = read_scales(n, in[1], 1, "x_scale");
  const std::vector<float> w_scale = read_scales(n, in[4], filters, "w_scale");
  int64_t channel_inner = 1;  // output channel of element i: (i / prod(spatial)) % filters
  for (size_t d = 2; d < ys.size(); ++d) channel_inner *= ys[d];
  requantize(n, acc, x_scale, 1, w_scale, channel_inner, in[6], in[7], out[0]);
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
void qlinear_matmul_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 8, 8);
  expect_outputs(n, out, 1, 1);
  const Shape& a = in[0].type.shape;
  const Shape& b = in[3].type.shape;
  HostTensor acc(TensorType{DType::i32, out[0].type.shape});
  matmul_accumulate(n, in[0], in[2], in[3], in[5], acc.view());
  const std::vector<float> a_scale = read_scales(n, in[1], rows_of(a), "a_scale");
  const std::vector<float> b_scale = read_scales(n, in[4], cols_of(b), "b_scale");
  // In the output [..., M, N], a row is N elements long and a column index runs fastest.
  const int64_t row_inner = b.size() < 2 ? 1 : b.back();
  requantize(n, acc, a_scale, row_inner, b_scale, 1, in[6], in[7], out[0]);
}

// y[i] = float(acc[i]) * (a_scale * b_scale[col]) + bias[col], col = i % N: the float result of
// ONNX Runtime's MatMulIntegerToFloat and DynamicQuantizeMatMul (computed in float32, as it does).
void scale_to_float(const Node& n, const HostTensor& acc, float a_scale, const std::vector<float>& b_scale,
                    const ConstTensorView& bias, const TensorView& y) {
  if (y.type.dtype != DType::f32) bad_node(n, "output must be float32, is " + to_string(y.type));
  const int64_t cols = y.type.rank() < 1 ? 1 : y.type.shape.back();
  if (bias.present && (bias.type.dtype != DType::f32 || bias.numel() != cols))
    bad_node(n, "bias is " + to_string(bias.type) + ", expected float32 with " + std::to_string(cols) + " values");
  const int32_t* v = acc.view().as<int32_t>();
  float* out = y.as<float>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    const auto col = static_cast<size_t>(cols == 0 ? 0 : i % cols);
    const float scale = a_scale * b_scale[b_scale.size() == 1 ? 0 : col];
    out[i] = static_cast<float>(v[i]) * scale + (bias.present ? bias.as<float>()[col] : 0.0f);
  }
}

// com.microsoft MatMulIntegerToFloat(A, B, a_scale, b_scale [, a_zp, b_zp, bias]).
void matmul_integer_to_float_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 4, 7);
  expect_outputs(n, out, 1, 1);
  HostTensor acc(TensorType{DType::i32, out[0].type.shape});
  matmul_accumulate(n, in[0], optional(in, 4), in[1], optional(in, 5), acc.view());
  const float a_scale = read_scales(n, in[2], 1, "a_scale")[0];
  const std::vector<float> b_scale = read_scales(n, in[3], cols_of(in[1].type.shape), "b_scale");
  scale_to_float(n, acc, a_scale, b_scale, optional(in, 6), out[0]);
}

// com.microsoft DynamicQuantizeMatMul(A, B, b_scale [, b_zp, bias]): A quantized to uint8 as
// DynamicQuantizeLinear does, then MatMulIntegerToFloat.
void dynamic_quantize_matmul_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 3, 5);
  expect_outputs(n, out, 1, 1);
  const ConstTensorView& a = in[0];
  if (a.type.dtype != DType::f32) unsupported(n, "A of dtype " + std::string(dtype_name(a.type.dtype)));
  const DynamicParams p = dynamic_params(a.as<float>(), a.numel());
  HostTensor a_q(TensorType{DType::u8, a.type.shape}), a_zp(TensorType{DType::u8, {}});
  for (int64_t i = 0; i < a.numel(); ++i)
    a_q.view().as<uint8_t>()[i] = saturate_round<uint8_t>(a.as<float>()[i] / p.scale, p.zero_point);
  a_zp.view().as<uint8_t>()[0] = p.zero_point;
  HostTensor acc(TensorType{DType::i32, out[0].type.shape});
  matmul_accumulate(n, a_q.view(), a_zp.view(), in[1], optional(in, 3), acc.view());
  const std::vector<float> b_scale = read_scales(n, in[2], cols_of(in[1].type.shape), "b_scale");
  scale_to_float(n, acc, p.scale, b_scale, optional(in, 4), out[0]);
}

}  // namespace

void register_integer_linear(KernelRegistry& r) {
  r.add("ConvInteger", conv_integer_kernel);
  r.add("MatMulInteger", matmul_integer_kernel);
  r.add("QLinearConv", qlinear_conv_kernel);
  r.add("QLinearMatMul", qlinear_matmul_kernel);
  r.add("MatMulIntegerToFloat", matmul_integer_to_float_kernel);  // com.microsoft
  r.add("DynamicQuantizeMatMul", dynamic_quantize_matmul_kernel);  // com.microsoft
}

}  // namespace tessera::ref
