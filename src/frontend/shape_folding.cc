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

bool is_int(DType t) { return t == DType::i64 || t == DType::i32 || t == DType::i8 || t == DType::u8; }

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

std::optional<IntTensor> slice(const Graph& g, const Node& n, const IntTensor& x) {
  if (x.shape.size() != 1) return std::nullopt;
  auto starts = ints_or_input(g, n, "starts", 1), ends = ints_or_input(g, n, "ends", 2);
  auto steps = ints_or_input(g, n, "steps", 4);
  if (starts.size() != 1 || ends.size() != 1) return std::nullopt;
  int64_t len = static_cast<int64_t>(x.v.size()), step = steps.empty() ? 1 : steps[0];
  if (step != 1) return std::nullopt;
  int64_t s = std::clamp(starts[0] < 0 ? starts[0] + len : starts[0], int64_t{0}, len);
  int64_t e = std::clamp(ends[0] < 0 ? ends[0] + len : ends[0], int64_t{0}, len);
  IntTensor out{{std::max<int64_t>(e - s, 0)}, {}, x.dtype};
  for (int64_t i = s; i < e; ++i) out.v.push_back(x.v[i]);
  return out;
}

std::optional<IntTensor> binary(const std::string& op, const IntTensor& a, const IntTensor& b) {
  if (a.v.size() != b.v.size() && a.v.size() != 1 && b.v.size() != 1) return std::nullopt;
  const IntTensor& big = a.v.size() >= b.v.size() ? a : b;
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
    return x;
  }
  if (op == "Identity") return x;
  if (op == "Slice") return slice(g, n, x);
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
