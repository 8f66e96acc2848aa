// Quantization parameter check (quant_check.h).
#include "frontend/quant_check.h"

#include <cmath>
#include <cstring>

#include "tessera/error.h"

namespace tessera::detail {
namespace {

// One quantized operand of a node: its data, scale and zero point inputs (-1: the op has none),
// how many values a per-axis scale or zero point may have (0: only per tensor), and whether the
// zero point must have the scale's shape (QuantizeLinear, DequantizeLinear).
struct Operand {
  int data, scale, zero_point;
  int64_t per_axis;
  bool same_shape = false;
};

class NodeCheck {
 public:
  NodeCheck(const Graph& g, const Node& n, const std::string& file) : g_(g), n_(n), file_(file) {}

  const Value* input(int i) const {
    return i >= 0 && static_cast<size_t>(i) < n_.inputs.size() && n_.inputs[static_cast<size_t>(i)] != kNoValue
               ? &g_.value(n_.inputs[static_cast<size_t>(i)])
               : nullptr;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw UserError(file_, "node '" + n_.name + "' (" + n_.op + ")", what);
  }

  void check(const Operand& o) const {
    const Value* data = input(o.data);
    const Value* scale = input(o.scale);
    const Value* zp = input(o.zero_point);
    if (scale) check_scale(*scale, o.per_axis);
    if (!zp) return;
    if (data && zp->type.dtype != data->type.dtype)
      fail("zero point '" + zp->name + "' is " + std::string(dtype_name(zp->type.dtype)) + " but its data '" + data->name +
           "' is " + std::string(dtype_name(data->type.dtype)) + "; they must have one element type");
    if (zp->type.dtype != DType::u8 && zp->type.dtype != DType::i8 && zp->type.dtype != DType::i32)
      fail("zero point '" + zp->name + "' is " + std::string(dtype_name(zp->type.dtype)) + ", expected uint8 or int8");
    check_length(*zp, o.per_axis, "zero point");
    if (o.same_shape && scale && zp->type.numel() != scale->type.numel())
      fail("zero point '" + zp->name + "' is " + to_string(zp->type) + " but scale '" + scale->name + "' is " +
           to_string(scale->type) + "; they must have the same length");
  }

 private:
  // A scalar, or a 1-D tensor of 1 or `per_axis` values.
  void check_length(const Value& v, int64_t per_axis, const char* what) const {
    const int64_t count = v.type.numel();
    if (v.type.rank() <= 1 && (count == 1 || (per_axis > 0 && count == per_axis))) return;
    fail(std::string(what) + " '" + v.name + "' is " + to_string(v.type) + ", expected a scalar" +
         (per_axis > 0 ? " or " + std::to_string(per_axis) + " values (one per channel)" : ""));
  }

  void check_scale(const Value& s, int64_t per_axis) const {
    check_length(s, per_axis, "scale");
    if (s.type.dtype != DType::f32 || !s.is_constant() || !s.data) return;
    for (int64_t i = 0; i < s.type.numel(); ++i) {
      float v;
      std::memcpy(&v, s.data->data() + i * 4, 4);
      if (!(v > 0.0f) || !std::isfinite(v))
        fail("scale '" + s.name + "' is " + std::to_string(v) + (s.type.numel() > 1 ? " at index " + std::to_string(i) : "") +
             "; scales must be positive and finite");
    }
  }

  const Graph& g_;
  const Node& n_;
  const std::string& file_;
};

// Dimension `from_end` places from the end of v's shape (1: the last), 0 when there is none.
int64_t dim_from_end(const Value* v, int from_end) {
  if (!v || v->type.rank() < from_end) return 0;
  return v->type.shape[static_cast<size_t>(v->type.rank() - from_end)];
}

int64_t first_dim(const Value* v) { return v && v->type.rank() > 0 ? v->type.shape[0] : 0; }

}  // namespace

void check_quantization(const Graph& g, const std::string& file) {
  for (const Node& n : g.nodes) {
    if (!n.domain.empty()) continue;
    const NodeCheck c(g, n, file);
    if (n.op == "QuantizeLinear" || n.op == "DequantizeLinear") {
      const Value* x = c.input(0);
      int64_t extent = 0;
      if (x && x->type.rank() > 0) {
        const int64_t rank = x->type.rank(), axis = attr_int(n.attrs, "axis", 1);
        const Value* scale = c.input(1);
        if (scale && scale->type.numel() > 1 && (axis < -rank || axis >= rank))
          c.fail("axis " + std::to_string(axis) + " is out of range for input '" + x->name + "' of rank " + std::to_string(rank));
        if (axis >= -rank && axis < rank) extent = x->type.shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
      }
      // QuantizeLinear's zero point gives the output type; its data is float.
      c.check({n.op == "DequantizeLinear" ? 0 : -1, 1, 2, extent, true});
    } else if (n.op == "ConvInteger") {
      c.check({0, -1, 2, 0});
      c.check({1, -1, 3, first_dim(c.input(1))});
    } else if (n.op == "MatMulInteger") {
      c.check({0, -1, 2, dim_from_end(c.input(0), 2)});
      c.check({1, -1, 3, dim_from_end(c.input(1), 1)});
    } else if (n.op == "QLinearConv") {
      c.check({0, 1, 2, 0});
      c.check({3, 4, 5, first_dim(c.input(3))});
      c.check({-1, 6, 7, 0});
    } else if (n.op == "QLinearMatMul") {
      c.check({0, 1, 2, dim_from_end(c.input(0), 2)});
      c.check({3, 4, 5, dim_from_end(c.input(3), 1)});
      c.check({-1, 6, 7, 0});
    }
  }
}

}  // namespace tessera::detail
