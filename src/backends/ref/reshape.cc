// Ops that keep the data and change only the shape, or read only the shape: Reshape, Flatten,
// Squeeze, Unsqueeze, Identity, Dropout (inference), Shape, Size.
//
// Row-major data does not move when a shape changes, so these kernels are one copy. They still
// recompute the shape the op defines (Reshape's 0 and -1, Flatten's axis, Squeeze's axes) and
// check it against the output view, so a wrong inferred type is caught here, not downstream.
#include <algorithm>
#include <cstring>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

Shape reshape_target(const Node& n, const Shape& in, std::vector<int64_t> target) {
  const bool allow_zero = attr_int(n.attrs, "allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allow_zero) {
      if (i >= in.size()) bad_node(n, "shape has 0 past the input's rank");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer >= 0) bad_node(n, "shape has two -1");
      infer = static_cast<int64_t>(i);
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) target[static_cast<size_t>(infer)] = known ? product_of(in) / known : 0;
  if (product_of(target) != product_of(in)) bad_node(n, "cannot reshape " + shape_to_string(in) + " to " + shape_to_string(target));
  return target;
}

void reshape_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  expect_shape(n, out[0], reshape_target(n, in[0].type.shape, read_ints(n, in[1])));
  copy_all(n, in[0], out[0]);
}

void flatten_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const int rank = static_cast<int>(xs.size());
  int64_t axis = attr_int(n.attrs, "axis", 1);
  if (axis < -rank || axis > rank) bad_node(n, "axis out of range");
  if (axis < 0) axis += rank;
  const int64_t outer = product_of(Shape(xs.begin(), xs.begin() + axis));
  expect_shape(n, out[0], {outer, product_of(Shape(xs.begin() + axis, xs.end()))});
  copy_all(n, in[0], out[0]);
}

// Axes from the second input (opset 13) or the attribute (opset 1-12).
std::vector<int64_t> axes_of(const Node& n, Inputs in) {
  return has_input(in, 1) ? read_ints(n, in[1]) : attr_ints(n.attrs, "axes");
}

void squeeze_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 2);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  std::vector<bool> drop(xs.size(), false);
  const auto axes = axes_of(n, in);
  for (size_t d = 0; d < xs.size(); ++d) drop[d] = axes.empty() && xs[d] == 1;
  for (int64_t a : axes) {
    const auto d = static_cast<size_t>(normalize_axis(n, a, static_cast<int>(xs.size())));
    if (xs[d] != 1) bad_node(n, "cannot squeeze dimension " + std::to_string(d) + " of " + shape_to_string(xs));
    drop[d] = true;
  }
  Shape want;
  for (size_t d = 0; d < xs.size(); ++d)
    if (!drop[d]) want.push_back(xs[d]);
  expect_shape(n, out[0], want);
  copy_all(n, in[0], out[0]);
}

void unsqueeze_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 2);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const auto axes = axes_of(n, in);
  const int rank = static_cast<int>(xs.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : axes) inserted[static_cast<size_t>(normalize_axis(n, a, rank))] = true;
  Shape want;
  size_t next = 0;
  for (int d = 0; d < rank; ++d) want.push_back(inserted[static_cast<size_t>(d)] ? 1 : xs[next++]);
  expect_shape(n, out[0], want);
  copy_all(n, in[0], out[0]);
}

void identity_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  expect_shape(n, out[0], in[0].type.shape);
  copy_all(n, in[0], out[0]);
}

// Dropout at inference (no training_mode input, or a false one), or in training mode with ratio 0
// (torch exports `F.dropout(x, p=0.0, training=...)` so): the identity, mask all true. Training
// with a ratio above 0 is random, which ref does not model.
void dropout_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 3);
  expect_outputs(n, out, 1, 2);
  const bool training = has_input(in, 2) && read_scalar(n, in[2]) != 0.0;
  const double ratio = has_input(in, 1) ? read_scalar(n, in[1]) : 0.5;
  if (training && ratio != 0.0) unsupported(n, "training_mode = true with a ratio other than 0");
  expect_shape(n, out[0], in[0].type.shape);
  copy_all(n, in[0], out[0]);
  if (has_output(out, 1)) std::fill_n(out[1].as<uint8_t>(), out[1].numel(), uint8_t{1});
}

void shape_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const auto rank = static_cast<int64_t>(xs.size());
  auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(attr_int(n.attrs, "start", 0)), end = clamp(attr_int(n.attrs, "end", rank));
  const int64_t count = std::max<int64_t>(0, end - start);
  expect_shape(n, out[0], {count});
  for (int64_t i = 0; i < count; ++i) out[0].as<int64_t>()[i] = xs[static_cast<size_t>(start + i)];
}

void size_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  expect_shape(n, out[0], {});
  out[0].as<int64_t>()[0] = in[0].numel();
}

}  // namespace

void register_reshape(KernelRegistry& r) {
  r.add("Reshape", reshape_kernel);
  r.add("Flatten", flatten_kernel);
  r.add("Squeeze", squeeze_kernel);
  r.add("Unsqueeze", unsqueeze_kernel);
  r.add("Identity", identity_kernel);
  r.add("Dropout", dropout_kernel);
  r.add("Shape", shape_kernel);
  r.add("Size", size_kernel);
}

}  // namespace tessera::ref
