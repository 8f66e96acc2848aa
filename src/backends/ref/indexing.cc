// Index-driven ops: GatherND, ScatterElements, ScatterND, OneHot, Trilu.
//
// Data is copied as whole elements (dtype-agnostic) except where the op computes on it
// (ScatterElements/ScatterND with reduction = add/mul). Indices may be negative (counted from
// the end of their dimension); one out of range is a KernelError. Scatter writes in index order,
// so duplicate indices without a reduction keep the last update, as ONNX's reference does.
#include <cstring>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

int64_t wrap_index(const Node& n, int64_t idx, int64_t dim) {
  if (idx < 0) idx += dim;
  if (idx < 0 || idx >= dim) bad_node(n, "index out of range");
  return idx;
}

// Writes `src` element j into `dst` element i, replacing or reducing per `reduction`.
void combine(const Node& n, const std::string& reduction, DType t, void* dst, int64_t i, const void* src, int64_t j) {
  if (reduction == "none") {
    const size_t size = dtype_size(t);
    std::memcpy(static_cast<std::byte*>(dst) + i * static_cast<int64_t>(size),
                static_cast<const std::byte*>(src) + j * static_cast<int64_t>(size), size);
    return;
  }
  const double a = load_as_double(t, dst, i), b = load_as_double(t, src, j);
  if (reduction == "add") store_from_double(t, dst, i, a + b);
  else if (reduction == "mul") store_from_double(t, dst, i, a * b);
  else unsupported(n, "reduction " + reduction);
}

void gather_nd_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const Shape& is = in[1].type.shape;
  const auto batch = static_cast<size_t>(attr_int(n.attrs, "batch_dims", 0));
  if (is.empty() || batch >= is.size() || batch >= xs.size()) bad_node(n, "bad ranks for batch_dims");
  const auto depth = static_cast<size_t>(is.back());
  if (batch + depth > xs.size()) bad_node(n, "index tuples are longer than the data's rank");
  Shape want(is.begin(), is.end() - 1);
  want.insert(want.end(), xs.begin() + static_cast<std::ptrdiff_t>(batch + depth), xs.end());
  expect_shape(n, out[0], want);
  const auto idx = read_ints(n, in[1]);
  const auto st = strides_of(xs);
  const int64_t slice = product_of(Shape(xs.begin() + static_cast<std::ptrdiff_t>(batch + depth), xs.end()));
  const int64_t batch_count = product_of(Shape(is.begin(), is.begin() + static_cast<std::ptrdiff_t>(batch)));
  const int64_t tuples = product_of(Shape(is.begin(), is.end() - 1));
  const int64_t per_batch = batch_count ? tuples / batch_count : 0;
  const size_t size = dtype_size(in[0].type.dtype);
  const int64_t batch_stride = batch ? st[batch - 1] : 0;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = (t / std::max<int64_t>(per_batch, 1)) * batch_stride;
    for (size_t k = 0; k < depth; ++k)
      off += wrap_index(n, idx[static_cast<size_t>(t) * depth + k], xs[batch + k]) * st[batch + k];
    std::memcpy(static_cast<std::byte*>(out[0].data) + t * slice * static_cast<int64_t>(size),
                static_cast<const std::byte*>(in[0].data) + off * static_cast<int64_t>(size),
                static_cast<size_t>(slice) * size);
  }
}

void scatter_elements_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 3, 3);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const Shape& is = in[1].type.shape;
  if (is != in[2].type.shape || is.size() != xs.size()) bad_node(n, "indices and updates must match, with the data's rank");
  expect_shape(n, out[0], xs);
  copy_all(n, in[0], out[0]);
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", 0), static_cast<int>(xs.size())));
  const std::string reduction = attr_string(n.attrs, "reduction", "none");
  const auto idx = read_ints(n, in[1]);
  auto st = strides_of(xs);
  const int64_t axis_stride = st[axis];
  st[axis] = 0;
  const std::vector<int64_t> all[] = {st};
  for_each_broadcast(is, all, [&](int64_t i, const int64_t* o) {
    const int64_t target = o[0] + wrap_index(n, idx[static_cast<size_t>(i)], xs[axis]) * axis_stride;
    combine(n, reduction, in[0].type.dtype, out[0].data, target, in[2].data, i);
  });
}

void scatter_nd_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 3, 3);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  const Shape& is = in[1].type.shape;
  expect_shape(n, out[0], xs);
  copy_all(n, in[0], out[0]);
  if (is.empty()) bad_node(n, "indices must have rank >= 1");
  const auto depth = static_cast<size_t>(is.back());
  if (depth > xs.size()) bad_node(n, "index tuples are longer than the data's rank");
  const std::string reduction = attr_string(n.attrs, "reduction", "none");
  const auto idx = read_ints(n, in[1]);
  const auto st = strides_of(xs);
  const int64_t slice = product_of(Shape(xs.begin() + static_cast<std::ptrdiff_t>(depth), xs.end()));
  const int64_t tuples = product_of(Shape(is.begin(), is.end() - 1));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (size_t k = 0; k < depth; ++k) off += wrap_index(n, idx[static_cast<size_t>(t) * depth + k], xs[k]) * st[k];
    for (int64_t j = 0; j < slice; ++j) combine(n, reduction, in[0].type.dtype, out[0].data, off + j, in[2].data, t * slice + j);
  }
}

void one_hot_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 3, 3);
  expect_outputs(n, out, 1, 1);
  const Shape& is = in[0].type.shape;
  const int rank = static_cast<int>(is.size()) + 1;
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", -1), rank));
  const auto depth = static_cast<int64_t>(read_scalar(n, in[1]));
  Shape want = is;
  want.insert(want.begin() + static_cast<std::ptrdiff_t>(axis), depth);
  expect_shape(n, out[0], want);
  if (in[2].numel() != 2) bad_node(n, "values must hold [off, on]");
  const DType t = out[0].type.dtype;
  const double off = load_as_double(in[2].type.dtype, in[2].data, 0), on = load_as_double(in[2].type.dtype, in[2].data, 1);
  const int64_t outer = product_of(Shape(is.begin(), is.begin() + static_cast<std::ptrdiff_t>(axis)));
  const int64_t inner = product_of(Shape(is.begin() + static_cast<std::ptrdiff_t>(axis), is.end()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t k = static_cast<int64_t>(load_as_double(in[0].type.dtype, in[0].data, o * inner + i));
        if (k < 0) k += depth;
        store_from_double(t, out[0].data, (o * depth + d) * inner + i, k == d ? on : off);
      }
}

void trilu_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 2);
  expect_outputs(n, out, 1, 1);
  const Shape& xs = in[0].type.shape;
  if (xs.size() < 2) bad_node(n, "input must have rank >= 2");
  expect_shape(n, out[0], xs);
  copy_all(n, in[0], out[0]);
  const int64_t k = has_input(in, 1) ? static_cast<int64_t>(read_scalar(n, in[1])) : 0;
  const bool upper = attr_int(n.attrs, "upper", 1) != 0;
  const int64_t rows = xs[xs.size() - 2], cols = xs.back();
  const int64_t mats = (rows * cols) != 0 ? in[0].numel() / (rows * cols) : 0;
  const size_t size = dtype_size(in[0].type.dtype);
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const bool keep = upper ? c - r >= k : c - r <= k;
        if (!keep) std::memset(static_cast<std::byte*>(out[0].data) + ((m * rows + r) * cols + c) * static_cast<int64_t>(size), 0, size);
      }
}

}  // namespace

void register_indexing(KernelRegistry& r) {
  r.add("GatherND", gather_nd_kernel);
  r.add("ScatterElements", scatter_elements_kernel);
  r.add("ScatterND", scatter_nd_kernel);
  r.add("OneHot", one_hot_kernel);
  r.add("Trilu", trilu_kernel);
}

}  // namespace tessera::ref
