// Ops that convert or create tensors: Cast, CastLike, ConstantOfShape, Range, EyeLike.
//
// Cast converts element by element through double, which is exact for every supported source
// dtype except i64 beyond 2^53 (copied directly when the dtypes agree). Float to integer
// truncates toward zero as C++ (and ONNX Runtime) do; to bool is "not zero". f16/bf16 round to
// nearest even. String tensors are not modelled by tessera, so Cast to or from STRING never loads.
#include <algorithm>
#include <cmath>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

void convert(const Node& n, const ConstTensorView& in, const TensorView& out) {
  expect_shape(n, out, in.type.shape);
  if (in.type.dtype == out.type.dtype) return copy_all(n, in, out);
  for (int64_t i = 0; i < in.numel(); ++i)
    store_from_double(out.type.dtype, out.data, i, load_as_double(in.type.dtype, in.data, i));
}

void cast_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  convert(n, in[0], out[0]);
}

void cast_like_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  if (out[0].type.dtype != in[1].type.dtype) bad_node(n, "output dtype differs from target_type's");
  convert(n, in[0], out[0]);
}

void constant_of_shape_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  expect_shape(n, out[0], read_ints(n, in[0]));
  double value = 0.0;
  DType dtype = DType::f32;
  if (auto it = n.attrs.find("value"); it != n.attrs.end()) {
    const auto* t = std::get_if<Tensor>(&it->second);
    if (!t || !t->data || t->type.numel() != 1) bad_node(n, "value must be a one-element tensor");
    dtype = t->type.dtype;
    value = load_as_double(dtype, t->data->data(), 0);
  }
  if (out[0].type.dtype != dtype) bad_node(n, "output dtype differs from value's");
  for (int64_t i = 0; i < out[0].numel(); ++i) store_from_double(dtype, out[0].data, i, value);
}

void range_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 3, 3);
  expect_outputs(n, out, 1, 1);
  const DType t = in[0].type.dtype;
  if (out[0].type.dtype != t) bad_node(n, "output dtype differs from start's");
  const double start = read_scalar(n, in[0]), limit = read_scalar(n, in[1]), delta = read_scalar(n, in[2]);
  const auto count = static_cast<int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
  expect_shape(n, out[0], {count});
  // Accumulate in the element type, as the ONNX definition's loop does.
  visit_dtype(n, t, [&]<typename T>() {
    T v = static_cast<T>(start);
    for (int64_t i = 0; i < count; ++i, v = static_cast<T>(v + static_cast<T>(delta))) out[0].as<T>()[i] = v;
  });
}

void eye_like_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  const Shape& s = in[0].type.shape;
  if (s.size() != 2) bad_node(n, "input must be 2-D");
  expect_shape(n, out[0], s);
  const int64_t k = attr_int(n.attrs, "k", 0);
  for (int64_t r = 0; r < s[0]; ++r)
    for (int64_t c = 0; c < s[1]; ++c) store_from_double(out[0].type.dtype, out[0].data, r * s[1] + c, c - r == k ? 1.0 : 0.0);
}

}  // namespace

void register_generate(KernelRegistry& r) {
  r.add("Cast", cast_kernel);
  r.add("CastLike", cast_like_kernel);
  r.add("ConstantOfShape", constant_of_shape_kernel);
  r.add("Range", range_kernel);
  r.add("EyeLike", eye_like_kernel);
}

}  // namespace tessera::ref
