// Ops that move elements without computing on them: Transpose, Concat, Split, Slice, Gather,
// GatherElements, Pad, Expand, Tile, DepthToSpace, SpaceToDepth.
//
// Every kernel here is dtype-agnostic: it copies whole elements of dtype_size() bytes, so one
// implementation serves f32, i64 shape tensors, bool masks alike. Most are a walk over the output
// in row-major order with per-dimension input strides (for_each_broadcast with a crafted stride
// vector): Transpose permutes the strides, Slice scales them by the steps, Expand zeroes them.
#include <algorithm>
#include <cstring>

#include "backends/ref/ref_kernels.h"
#include "backends/ref/ref_util.h"

namespace tessera::ref {
namespace {

using Inputs = std::span<const ConstTensorView>;
using Outputs = std::span<const TensorView>;

const std::byte* bytes_of(const ConstTensorView& v) { return static_cast<const std::byte*>(v.data); }
std::byte* bytes_of(const TensorView& v) { return static_cast<std::byte*>(v.data); }

// out[i] = in[base + offset(i)] for every output element, offsets from `strides` (in elements).
// The trailing dimensions whose input strides are row-major (a Slice of the leading axes, a
// Transpose that keeps the last ones) form one contiguous run in both tensors: it is copied with
// one memcpy per outer index instead of one per element (a 1x128x768 -> 1x128x256 Slice: one
// copy of 1 KiB per row).
void gather_strided(const ConstTensorView& in, const TensorView& out, int64_t base, std::vector<int64_t> strides) {
  const auto size = static_cast<int64_t>(dtype_size(in.type.dtype));
  const Shape& shape = out.type.shape;
  size_t outer = shape.size();
  int64_t run = 1;
  while (outer > 0 && strides[outer - 1] == run) run *= shape[--outer];
  const Shape outer_shape(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(outer));
  strides.resize(outer);
  const std::vector<int64_t> all[] = {std::move(strides)};
  const std::byte* src = bytes_of(in);
  std::byte* dst = bytes_of(out);
  const auto bytes = static_cast<size_t>(run * size);
  if (bytes == 0) return;   // an empty run (a zero dim): nothing to copy, and the views may hold no storage
  for_each_broadcast(outer_shape, all, [&](int64_t i, const int64_t* o) {
    std::memcpy(dst + i * run * size, src + (base + o[0]) * size, bytes);
  });
}

void same_dtype(const Node& n, const ConstTensorView& in, const TensorView& out) {
  if (in.type.dtype != out.type.dtype) bad_node(n, "output dtype differs from the data's");
}

void transpose_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  same_dtype(n, in[0], out[0]);
  const Shape& xs = in[0].type.shape;
  std::vector<int64_t> perm(xs.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
  perm = attr_ints(n.attrs, "perm", perm);
  if (perm.size() != xs.size()) bad_node(n, "perm has the wrong length");
  const auto st = strides_of(xs);
  Shape want;
  std::vector<int64_t> strides;
  for (int64_t p : perm) {
    const auto d = static_cast<size_t>(normalize_axis(n, p, static_cast<int>(xs.size())));
    want.push_back(xs[d]);
    strides.push_back(st[d]);
  }
  expect_shape(n, out[0], want);
  gather_strided(in[0], out[0], 0, strides);
}

// Splits `s` around `axis`: (product before, extent, product after).
std::tuple<int64_t, int64_t, int64_t> around(const Shape& s, size_t axis) {
  return {product_of(Shape(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis))), s[axis],
          product_of(Shape(s.begin() + static_cast<std::ptrdiff_t>(axis) + 1, s.end()))};
}

void concat_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, in.size());
  expect_outputs(n, out, 1, 1);
  const Shape& ys = out[0].type.shape;
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", 0), static_cast<int>(ys.size())));
  Shape want = in[0].type.shape;
  if (want.size() != ys.size()) bad_node(n, "inputs and output differ in rank");
  want[axis] = 0;
  for (const auto& v : in) {
    same_dtype(n, v, out[0]);
    if (v.type.shape.size() != ys.size()) bad_node(n, "inputs differ in rank");
    want[axis] += v.type.shape[axis];
  }
  expect_shape(n, out[0], want);
  const auto [outer, total, inner] = around(ys, axis);
  const size_t size = dtype_size(out[0].type.dtype);
  int64_t at = 0;  // running offset along the axis
  for (const auto& v : in) {
    const int64_t len = v.type.shape[axis];
    if (len * inner == 0) continue;   // an empty input: nothing to copy (and no data to copy from)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(bytes_of(out[0]) + ((o * total + at) * inner) * static_cast<int64_t>(size),
                  bytes_of(v) + (o * len * inner) * static_cast<int64_t>(size), static_cast<size_t>(len * inner) * size);
    at += len;
  }
}

void split_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 2);
  expect_outputs(n, out, 1, out.size());
  const Shape& xs = in[0].type.shape;
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", 0), static_cast<int>(xs.size())));
  std::vector<int64_t> sizes = has_input(in, 1) ? read_ints(n, in[1]) : attr_ints(n.attrs, "split");
  if (sizes.empty()) {  // equal parts, the last one smaller when they do not divide evenly
    const auto k = static_cast<int64_t>(out.size());
    const int64_t part = (xs[axis] + k - 1) / k;
    for (int64_t i = 0; i < k; ++i) sizes.push_back(std::min(part, xs[axis] - i * part));
  }
  if (sizes.size() != out.size()) bad_node(n, "split sizes do not match the outputs");
  const auto [outer, total, inner] = around(xs, axis);
  const size_t size = dtype_size(xs.empty() ? DType::f32 : in[0].type.dtype);
  int64_t at = 0;
  for (size_t j = 0; j < out.size(); ++j) {
    Shape want = xs;
    want[axis] = sizes[j];
    expect_shape(n, out[j], want);
    same_dtype(n, in[0], out[j]);
    if (has_output(out, j))
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(bytes_of(out[j]) + (o * sizes[j] * inner) * static_cast<int64_t>(size),
                    bytes_of(in[0]) + ((o * total + at) * inner) * static_cast<int64_t>(size),
                    static_cast<size_t>(sizes[j] * inner) * size);
    at += sizes[j];
  }
  if (at != total) bad_node(n, "split sizes do not add up to the axis");
}

void slice_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 5);
  expect_outputs(n, out, 1, 1);
  same_dtype(n, in[0], out[0]);
  const Shape& xs = in[0].type.shape;
  const int rank = static_cast<int>(xs.size());
  const bool from_inputs = in.size() >= 3;
  const auto starts = from_inputs ? read_ints(n, in[1]) : attr_ints(n.attrs, "starts");
  const auto ends = from_inputs ? read_ints(n, in[2]) : attr_ints(n.attrs, "ends");
  std::vector<int64_t> axes = has_input(in, 3) ? read_ints(n, in[3]) : attr_ints(n.attrs, "axes");
  const std::vector<int64_t> steps = has_input(in, 4) ? read_ints(n, in[4]) : std::vector<int64_t>(starts.size(), 1);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    bad_node(n, "starts, ends, axes and steps differ in length");
  const auto st = strides_of(xs);
  Shape want = xs;
  std::vector<int64_t> strides = st;
  int64_t base = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto d = static_cast<size_t>(normalize_axis(n, axes[i], rank));
    const int64_t dim = xs[d], step = steps[i];
    if (step == 0) bad_node(n, "step 0");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    e = step > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
    want[d] = step > 0 ? std::max<int64_t>(0, (e - s + step - 1) / step) : std::max<int64_t>(0, (s - e - step - 1) / -step);
    base += (want[d] > 0 ? s : 0) * st[d];
    strides[d] = st[d] * step;
  }
  expect_shape(n, out[0], want);
  gather_strided(in[0], out[0], base, strides);
}

void gather_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  same_dtype(n, in[0], out[0]);
  const Shape& xs = in[0].type.shape;
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", 0), static_cast<int>(xs.size())));
  const auto indices = read_ints(n, in[1]);
  Shape want(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(axis));
  want.insert(want.end(), in[1].type.shape.begin(), in[1].type.shape.end());
  want.insert(want.end(), xs.begin() + static_cast<std::ptrdiff_t>(axis) + 1, xs.end());
  expect_shape(n, out[0], want);
  const auto [outer, dim, inner] = around(xs, axis);
  const auto block = static_cast<int64_t>(dtype_size(xs.empty() ? DType::f32 : in[0].type.dtype)) * inner;
  const auto count = static_cast<int64_t>(indices.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      int64_t idx = indices[static_cast<size_t>(j)];
      if (idx < 0) idx += dim;
      if (idx < 0 || idx >= dim) bad_node(n, "index " + std::to_string(indices[static_cast<size_t>(j)]) + " out of range");
      std::memcpy(bytes_of(out[0]) + (o * count + j) * block, bytes_of(in[0]) + (o * dim + idx) * block,
                  static_cast<size_t>(block));
    }
}

void gather_elements_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  same_dtype(n, in[0], out[0]);
  const Shape& xs = in[0].type.shape;
  const Shape& is = in[1].type.shape;
  const auto axis = static_cast<size_t>(normalize_axis(n, attr_int(n.attrs, "axis", 0), static_cast<int>(xs.size())));
  if (is.size() != xs.size()) bad_node(n, "indices must have the data's rank");
  expect_shape(n, out[0], is);
  const auto indices = read_ints(n, in[1]);
  auto st = strides_of(xs);
  const int64_t axis_stride = st[axis];
  st[axis] = 0;  // the axis coordinate comes from the index instead
  const std::vector<int64_t> all[] = {st};
  const size_t size = dtype_size(in[0].type.dtype);
  for_each_broadcast(is, all, [&](int64_t i, const int64_t* o) {
    int64_t idx = indices[static_cast<size_t>(i)];
    if (idx < 0) idx += xs[axis];
    if (idx < 0 || idx >= xs[axis]) bad_node(n, "index out of range");
    std::memcpy(bytes_of(out[0]) + i * static_cast<int64_t>(size),
                bytes_of(in[0]) + (o[0] + idx * axis_stride) * static_cast<int64_t>(size), size);
  });
}

// Pad (opset 11+: pads and constant_value as inputs, opset 18's axes too; opset 2: attributes).
void pad_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 4);
  expect_outputs(n, out, 1, 1);
  same_dtype(n, in[0], out[0]);
  const Shape& xs = in[0].type.shape;
  const size_t rank = xs.size();
  const auto given = has_input(in, 1) ? read_ints(n, in[1]) : attr_ints(n.attrs, "pads");
  std::vector<int64_t> axes;
  if (has_input(in, 3)) {
    for (int64_t a : read_ints(n, in[3])) axes.push_back(normalize_axis(n, a, static_cast<int>(rank)));
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (given.size() != 2 * axes.size()) bad_node(n, "pads has " + std::to_string(given.size()) + " values");
  std::vector<int64_t> begin(rank, 0);
  Shape want = xs;
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto d = static_cast<size_t>(axes[i]);
    begin[d] = given[i];
    want[d] = xs[d] + given[i] + given[i + axes.size()];
  }
  expect_shape(n, out[0], want);
  const std::string mode = attr_string(n.attrs, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") unsupported(n, "mode " + mode);
  const DType t = in[0].type.dtype;
  const size_t size = dtype_size(t);
  std::vector<std::byte> fill(size);  // the constant, in the data's dtype
  const double value = has_input(in, 2) ? read_scalar(n, in[2]) : attr_float(n.attrs, "value", 0.0);
  store_from_double(t, fill.data(), 0, value);
  const auto st = strides_of(xs);
  std::vector<int64_t> coord(rank, 0);
  const int64_t total = out[0].numel();
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, src = 0;
    bool outside = false;
    for (size_t d = rank; d-- > 0;) {
      int64_t c = rest % want[d] - begin[d];
      rest /= want[d];
      if (c < 0 || c >= xs[d]) {
        if (mode == "constant" || xs[d] == 0) {
          outside = true;
        } else if (mode == "edge") {
          c = std::clamp<int64_t>(c, 0, xs[d] - 1);
        } else {  // reflect, without repeating the edge
          const int64_t period = std::max<int64_t>(2 * (xs[d] - 1), 1);
          c = ((c % period) + period) % period;
          if (c >= xs[d]) c = period - c;
        }
      }
      src += c * st[d];
    }
    std::memcpy(bytes_of(out[0]) + i * static_cast<int64_t>(size),
                outside ? fill.data() : bytes_of(in[0]) + src * static_cast<int64_t>(size), size);
  }
}

void expand_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  same_dtype(n, in[0], out[0]);
  const Shape shapes[] = {in[0].type.shape, read_ints(n, in[1])};
  const Shape want = broadcast_shapes(n, shapes);
  expect_shape(n, out[0], want);
  gather_strided(in[0], out[0], 0, broadcast_strides(in[0].type.shape, want));
}

void tile_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 2, 2);
  expect_outputs(n, out, 1, 1);
  same_dtype(n, in[0], out[0]);
  const Shape& xs = in[0].type.shape;
  const auto repeats = read_ints(n, in[1]);
  if (repeats.size() != xs.size()) bad_node(n, "repeats must have one value per dimension");
  Shape want = xs;
  for (size_t d = 0; d < xs.size(); ++d) want[d] *= repeats[d];
  expect_shape(n, out[0], want);
  const auto st = strides_of(xs);
  const size_t size = dtype_size(in[0].type.dtype);
  for (int64_t i = 0; i < out[0].numel(); ++i) {
    int64_t rest = i, src = 0;
    for (size_t d = xs.size(); d-- > 0;) {
      src += (rest % want[d]) % xs[d] * st[d];
      rest /= want[d];
    }
    std::memcpy(bytes_of(out[0]) + i * static_cast<int64_t>(size), bytes_of(in[0]) + src * static_cast<int64_t>(size), size);
  }
}

// DepthToSpace / SpaceToDepth on [N, C, H, W] with block size b, written as the reshape +
// transpose ONNX defines them by: a strided gather over a 6-D view of the input.
template <bool ToSpace>
void depth_space_kernel(const Node& n, Inputs in, Outputs out) {
  expect_inputs(n, in, 1, 1);
  expect_outputs(n, out, 1, 1);
  same_dtype(n, in[0], out[0]);
  const Shape& xs = in[0].type.shape;
  const int64_t b = attr_int(n.attrs, "blocksize", 0);
  if (xs.size() != 4 || b <= 0) bad_node(n, "needs a 4-D input and a positive blocksize");
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  if constexpr (ToSpace) {
    if (C % (b * b) != 0) bad_node(n, "channels not divisible by blocksize^2");
    const int64_t c = C / (b * b);
    expect_shape(n, out[0], {N, c, H * b, W * b});
    const bool crd = attr_string(n.attrs, "mode", "DCR") == "CRD";
    // Output viewed as [N, c, H, b1, W, b2]; input channel = DCR: (b1*b + b2)*c + ch, CRD: ch*b*b + b1*b + b2.
    const int64_t hw = H * W;
    const int64_t s_ch = crd ? b * b * hw : hw, s_b1 = crd ? b * hw : b * c * hw, s_b2 = crd ? hw : c * hw;
    const std::vector<int64_t> strides = {C * hw, s_ch, W, s_b1, 1, s_b2};
    TensorView view = out[0];
    view.type.shape = {N, c, H, b, W, b};
    gather_strided(in[0], view, 0, strides);
  } else {
    if (H % b != 0 || W % b != 0) bad_node(n, "spatial dims not divisible by blocksize");
    const int64_t h = H / b, w = W / b;
    expect_shape(n, out[0], {N, C * b * b, h, w});
    // Output viewed as [N, b1, b2, C, h, w] reads x[n, C, h*b + b1, w*b + b2].
    const std::vector<int64_t> strides = {C * H * W, W, 1, H * W, b * W, b};
    TensorView view = out[0];
    view.type.shape = {N, b, b, C, h, w};
    gather_strided(in[0], view, 0, strides);
  }
}

}  // namespace

void register_data_movement(KernelRegistry& r) {
  r.add("Transpose", transpose_kernel);
  r.add("Concat", concat_kernel);
  r.add("Split", split_kernel);
  r.add("Slice", slice_kernel);
  r.add("Gather", gather_kernel);
  r.add("GatherElements", gather_elements_kernel);
  r.add("Pad", pad_kernel);
  r.add("Expand", expand_kernel);
  r.add("Tile", tile_kernel);
  r.add("DepthToSpace", depth_space_kernel<true>);
  r.add("SpaceToDepth", depth_space_kernel<false>);
}

}  // namespace tessera::ref
