#include "shape_folding.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace tessera::detail {
namespace {

// A small integer tensor, the only thing shape computations produce.
struct IntTensor {
  Shape shape;
  std::vector<int64_t> v;
  DType dtype = DType::i64;
};

bool is_int(DType t) {
  return t == DType::i64 || t == DType::i32 || t == DType::i8 || t == DType::u8 || t == DType::boolean;
}

std::optional<IntTensor> read(const Graph& g, ValueId id) {
  if (id == kNoValue) return std::nullopt;
  const Value& val = g.value(id);
  if (!val.is_constant() || !val.data || !is_int(val.type.dtype) || val.type.numel() > kMaxFoldElements)
    return std::nullopt;
  IntTensor t{val.type.shape, {}, val.type.dtype};
  for (int64_t i = 0; i < val.type.numel(); ++i) {
    const uint8_t* p = val.data->data() + i * dtype_size(val.type.dtype);
    switch (val.type.dtype) {
      case DType::i64: { int64_t x; std::memcpy(&x, p, 8); t.v.push_back(x); break; }
      case DType::i32: { int32_t x; std::memcpy(&x, p, 4); t.v.push_back(x); break; }
      case DType::i8: t.v.push_back(static_cast<int8_t>(*p)); break;
      default: t.v.push_back(*p); break;
    }
  }
  return t;
}

TensorData write(const IntTensor& t) {
  auto bytes = std::make_shared<TensorBytes>(t.v.size() * dtype_size(t.dtype));
  for (size_t i = 0; i < t.v.size(); ++i) {
    uint8_t* p = bytes->data() + i * dtype_size(t.dtype);
    switch (t.dtype) {
      case DType::i64: std::memcpy(p, &t.v[i], 8); break;
      case DType::i32: { int32_t x = static_cast<int32_t>(t.v[i]); std::memcpy(p, &x, 4); break; }
      default: *p = static_cast<uint8_t>(t.v[i]); break;
    }
  }
  return bytes;
}

int64_t norm_axis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

std::vector<int64_t> ints_or_input(const Graph& g, const Node& n, const char* attr, size_t input) {
  if (n.attrs.count(attr)) return attr_ints(n.attrs, attr);
  if (input < n.inputs.size())
    if (auto t = read(g, n.inputs[input])) return t->v;
  return {};
}

std::vector<int64_t> strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// ONNX Slice on any rank, negative steps included (PyTorch's pad reversal: Slice(x, -1, -inf, -1)).
std::optional<IntTensor> slice(const Graph& g, const Node& n, const IntTensor& x) {
  auto starts = ints_or_input(g, n, "starts", 1), ends = ints_or_input(g, n, "ends", 2);
  auto axes = ints_or_input(g, n, "axes", 3), steps = ints_or_input(g, n, "steps", 4);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (starts.empty() || starts.size() != ends.size()) return std::nullopt;
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) return std::nullopt;
  std::vector<int64_t> first(x.shape.size(), 0), step(x.shape.size(), 1);
  Shape out_shape = x.shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t ax = norm_axis(axes[i], rank);
    if (ax < 0 || ax >= rank || steps[i] == 0) return std::nullopt;
    const int64_t dim = x.shape[static_cast<size_t>(ax)], st = steps[i];
    int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i], e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (st > 0) {
      b = std::clamp(b, int64_t{0}, dim);
      e = std::clamp(e, int64_t{0}, dim);
    } else {
      b = std::clamp(b, int64_t{0}, dim - 1);
      e = std::clamp(e, int64_t{-1}, dim - 1);
    }
    const int64_t len = st > 0 ? (e > b ? (e - b + st - 1) / st : 0) : (b > e ? (b - e - st - 1) / -st : 0);
    first[static_cast<size_t>(ax)] = b;
    step[static_cast<size_t>(ax)] = st;
    out_shape[static_cast<size_t>(ax)] = len;
  }
  IntTensor out{out_shape, {}, x.dtype};
  const auto in_st = strides(x.shape);
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, off = 0;
    for (size_t d = out_shape.size(); d-- > 0;) {
      const int64_t k = rest % out_shape[d];
      rest /= out_shape[d];
      off += (first[d] + k * step[d]) * in_st[d];
    }
    out.v.push_back(x.v[static_cast<size_t>(off)]);
  }
  return out;
}

std::optional<IntTensor> transpose(const Node& n, const IntTensor& x) {
  const size_t rank = x.shape.size();
  std::vector<int64_t> perm = attr_ints(n.attrs, "perm", {});
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  if (perm.size() != rank) return std::nullopt;
  Shape out_shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(rank)) return std::nullopt;
    out_shape[d] = x.shape[static_cast<size_t>(perm[d])];
  }
  const auto in_st = strides(x.shape);
  IntTensor out{out_shape, {}, x.dtype};
  for (size_t i = 0; i < x.v.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), off = 0;
    for (size_t d = rank; d-- > 0;) {
      const int64_t k = rest % out_shape[d];
      rest /= out_shape[d];
      off += k * in_st[static_cast<size_t>(perm[d])];
    }
    out.v.push_back(x.v[static_cast<size_t>(off)]);
  }
  return out;
}

// ConstantOfShape with an integer value (the default value is a float 0: not a shape).
std::optional<IntTensor> constant_of_shape(const Node& n, const IntTensor& shape) {
  auto it = n.attrs.find("value");
  if (it == n.attrs.end()) return std::nullopt;
  const Tensor* t = std::get_if<Tensor>(&it->second);
  if (!t || !t->data || t->type.numel() != 1 || !is_int(t->type.dtype) || shape.shape.size() != 1) return std::nullopt;
  int64_t total = 1;
  for (int64_t d : shape.v) {
    if (d < 0) return std::nullopt;
    total *= d;
    if (total > kMaxFoldElements) return std::nullopt;
  }
  int64_t value = 0;
  switch (t->type.dtype) {
    case DType::i64: std::memcpy(&value, t->data->data(), 8); break;
    case DType::i32: { int32_t v; std::memcpy(&v, t->data->data(), 4); value = v; break; }
    case DType::i8: value = static_cast<int8_t>((*t->data)[0]); break;
    default: value = (*t->data)[0]; break;
  }
  return IntTensor{Shape(shape.v.begin(), shape.v.end()), std::vector<int64_t>(static_cast<size_t>(total), value), t->type.dtype};
}

std::optional<IntTensor> binary(const std::string& op, const IntTensor& a, const IntTensor& b) {
  if (a.v.size() != b.v.size() && a.v.size() != 1 && b.v.size() != 1) return std::nullopt;
  // The broadcast shape: the operand with more elements, or of higher rank ([] - [1] is [1]).
  const bool a_big = a.v.size() != b.v.size() ? a.v.size() > b.v.size() : a.shape.size() >= b.shape.size();
  const IntTensor& big = a_big ? a : b;
  IntTensor out{big.shape, {}, a.dtype};
  for (size_t i = 0; i < big.v.size(); ++i) {
    int64_t x = a.v[a.v.size() == 1 ? 0 : i], y = b.v[b.v.size() == 1 ? 0 : i];
    if (op == "Add") out.v.push_back(x + y);
    else if (op == "Sub") out.v.push_back(x - y);
    else if (op == "Mul") out.v.push_back(x * y);
    else if (y == 0) return std::nullopt;
    else out.v.push_back(x / y);
  }
  return out;
}

std::optional<IntTensor> evaluate(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.outputs.size() != 1) return std::nullopt;
  const std::string& op = n.op;
  if (op == "Shape") {
    const Shape& s = g.value(n.inputs[0]).type.shape;
    int64_t r = static_cast<int64_t>(s.size());
    int64_t b = std::clamp(norm_axis(attr_int(n.attrs, "start", 0), r), int64_t{0}, r);
    int64_t e = std::clamp(norm_axis(attr_int(n.attrs, "end", r), r), int64_t{0}, r);
    IntTensor out{{std::max<int64_t>(e - b, 0)}, {}, DType::i64};
    for (int64_t i = b; i < e; ++i) out.v.push_back(s[i]);
    return out;
  }
  if (op == "Size") {
    // Only the element count matters, so any input type will do.
    return IntTensor{{}, {g.value(n.inputs[0]).type.numel()}, DType::i64};
  }
  std::vector<IntTensor> in;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) continue;
    auto t = read(g, v);
    if (!t) return std::nullopt;
    in.push_back(*t);
  }
  if (in.empty()) return std::nullopt;
  IntTensor& x = in[0];
  if (op == "Cast") {
    auto to = dtype_from_onnx(static_cast<int>(attr_int(n.attrs, "to", 0)));
    if (!to || !is_int(*to)) return std::nullopt;
    x.dtype = *to;
    if (*to == DType::boolean)
      for (int64_t& v : x.v) v = v != 0;
    return x;
  }
  if (op == "Identity") return x;
  if (op == "Not" && x.dtype == DType::boolean) {
    for (int64_t& v : x.v) v = !v;
    return x;
  }
  if (op == "Equal" && in.size() == 2) {
    auto out = binary("Sub", in[0], in[1]);
    if (!out) return std::nullopt;
    out->dtype = DType::boolean;
    for (int64_t& v : out->v) v = v == 0;
    return out;
  }
  if (op == "Slice") return slice(g, n, x);
  if (op == "Transpose") return transpose(n, x);
  if (op == "ConstantOfShape") return constant_of_shape(n, x);
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten") {
    // Only the shape changes; the output type is already inferred.
    x.shape = g.value(n.outputs[0]).type.shape;
    return x;
  }
  if (op == "Concat") {
    IntTensor out{{0}, {}, x.dtype};
    for (const auto& t : in) {
      if (t.shape.size() != 1) return std::nullopt;
      out.v.insert(out.v.end(), t.v.begin(), t.v.end());
    }
    out.shape[0] = static_cast<int64_t>(out.v.size());
    return out;
  }
  if (op == "Gather" && in.size() == 2 && x.shape.size() == 1) {
    IntTensor out{in[1].shape, {}, x.dtype};
    for (int64_t i : in[1].v) {
      int64_t k = i < 0 ? i + static_cast<int64_t>(x.v.size()) : i;
      if (k < 0 || k >= static_cast<int64_t>(x.v.size())) return std::nullopt;
      out.v.push_back(x.v[k]);
    }
    return out;
  }
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && in.size() == 2) return binary(op, in[0], in[1]);
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<int64_t>> constant_ints(const Graph& g, ValueId v) {
  std::optional<IntTensor> t = read(g, v);
  if (!t) return std::nullopt;
  return std::move(t->v);
}

int fold_shape_computations(Graph& g, std::vector<char>& known, std::vector<char>& folded) {
  int count = 0;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (folded[id]) continue;
    const Node& n = g.node(id);
    bool inputs_known = true;
    for (ValueId v : n.inputs) inputs_known &= v == kNoValue || known[v];
    for (ValueId v : n.outputs) inputs_known &= static_cast<bool>(known[v]);
    if (!inputs_known) continue;
    auto result = evaluate(g, n);
    if (!result || static_cast<int64_t>(result->v.size()) > kMaxFoldElements) continue;
    Value& out = g.value(n.outputs[0]);
    if (result->shape != out.type.shape) continue;  // disagrees with inference: leave it alone
    out.type.dtype = result->dtype;
    out.kind = ValueKind::Constant;
    out.producer = kNoNode;
    out.data = write(*result);
    folded[id] = 1;
    ++count;
  }
  return count;
}

}  // namespace tessera::detail
