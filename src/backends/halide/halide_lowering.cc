// Lowering (see halide_lowering.h): values to Funcs, nodes through the op table.
#include "backends/halide/halide_lowering.h"

#include <cstring>
#include <limits>

#include "tessera/host_tensor.h"
#include "backends/kernel.h"

namespace tessera::halide {

Halide::Expr HTensor::at(const std::vector<Halide::Expr>& idx) const {
  std::vector<Halide::Expr> rev(idx.rbegin(), idx.rend());
  return func(rev);
}

Halide::Expr broadcast_at(const HTensor& t, const std::vector<Halide::Expr>& idx, const Shape& out) {
  const size_t off = out.size() - t.shape.size();
  std::vector<Halide::Expr> in;
  for (size_t k = 0; k < t.shape.size(); ++k)
    in.push_back(t.shape[k] == 1 && out[k + off] != 1 ? Halide::Expr(0) : idx[k + off]);
  return t.at(in);
}

std::vector<Halide::Var> index_vars(int rank) {
  std::vector<Halide::Var> v;
  for (int i = 0; i < rank; ++i) v.emplace_back("i" + std::to_string(i));
  return v;
}

std::vector<Halide::Expr> as_exprs(const std::vector<Halide::Var>& vars) {
  return std::vector<Halide::Expr>(vars.begin(), vars.end());
}

void define(Halide::Func& f, const std::vector<Halide::Var>& vars, const Halide::Expr& e) {
  std::vector<Halide::Var> rev(vars.rbegin(), vars.rend());
  f(rev) = e;
}

void unsupported(const Node& n, const std::string& why) {
  throw KernelUnsupported("halide: " + n.op + " " + n.name + ": " + why);
}

int normalize_axis(const Node& n, int64_t axis, int rank) {
  if (axis < -rank || axis >= std::max(rank, 1)) unsupported(n, "axis " + std::to_string(axis) + " out of range");
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

const OpLowerings& op_lowerings() {
  static const OpLowerings table = [] {
    OpLowerings t;
    register_elementwise_ops(t);
    register_layout_ops(t);
    register_reduce_ops(t);
    register_pool_ops(t);
    register_resize_ops(t);
    return t;
  }();
  return table;
}

bool lowers(std::string_view op) { return op_lowerings().find(op) != op_lowerings().end(); }

namespace {

constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

// A constant's elements as f32 (FunctionFrame's seeded random values when it has no data).
std::vector<float> constant_floats(const Graph& fn, ValueId v) {
  const Value& val = fn.value(v);
  HostTensor t = val.data ? HostTensor::from_tensor(Tensor{val.type, val.data})
                          : HostTensor::random(val.type, 0x7e55e7a0u + static_cast<uint64_t>(v));
  auto s = t.as<float>();
  return {s.begin(), s.end()};
}

}  // namespace

Lowering::Lowering(const Graph& fn) : fn_(fn), tensors_(fn.values.size()) {
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const Value& v = fn.value(fn.inputs[i]);
    if (v.type.dtype != DType::f32)
      throw KernelUnsupported("halide: input " + v.name + " is " + to_string(v.type) + " (only f32)");
    Halide::ImageParam p(Halide::Float(32), v.type.rank(), "in" + std::to_string(i));
    params_.push_back(p);
    tensors_[static_cast<size_t>(fn.inputs[i])] = HTensor{Halide::Func(p), v.type.shape};
  }
  for (const Value& v : fn.values)
    if (v.type.numel() > kMaxElements)
      throw KernelUnsupported("halide: value " + v.name + " has more than 2^31 elements");
}

const HTensor& Lowering::tensor(ValueId v) {
  auto& slot = tensors_[static_cast<size_t>(v)];
  if (slot) return *slot;
  const Value& val = fn_.value(v);
  if (!val.is_constant())
    throw KernelUnsupported("halide: value " + val.name + " is read before it is computed (an output the op does not produce)");
  if (val.type.dtype != DType::f32)
    throw KernelUnsupported("halide: constant " + val.name + " is " + to_string(val.type) + " and read as data (only f32)");
  const std::vector<float> data = constant_floats(fn_, v);
  const int rank = val.type.rank();
  const auto vars = index_vars(rank);
  Halide::Func f("c" + std::to_string(v));
  if (data.size() == 1) {
    define(f, vars, Halide::Expr(data[0]));   // a scalar folds into the expressions that read it
  } else {
    std::vector<int> extents(val.type.shape.rbegin(), val.type.shape.rend());
    Halide::Buffer<float> buf(extents);
    std::memcpy(buf.data(), data.data(), data.size() * sizeof(float));
    std::vector<Halide::Var> rev(vars.rbegin(), vars.rend());
    f(rev) = buf(std::vector<Halide::Expr>(rev.begin(), rev.end()));
  }
  slot = HTensor{f, val.type.shape};
  return *slot;
}

void Lowering::set(ValueId v, Halide::Func func) {
  tensors_[static_cast<size_t>(v)] = HTensor{std::move(func), fn_.value(v).type.shape};
}

Halide::Func Lowering::func_for(ValueId v, const std::string& suffix) const {
  return Halide::Func("v" + std::to_string(v) + suffix);
}

void Lowering::define_output(ValueId y, const std::vector<Halide::Var>& vars, const Halide::Expr& e) {
  Halide::Func out = func_for(y);
  define(out, vars, e);
  set(y, out);
}

bool Lowering::is_constant(ValueId v) const { return v != kNoValue && fn_.value(v).is_constant(); }

std::vector<int64_t> Lowering::const_ints(const Node& n, ValueId v) const {
  const Value& val = fn_.value(v);
  if (!val.is_constant() || !val.data) unsupported(n, "operand " + val.name + " must be a constant with data");
  HostTensor t = HostTensor::from_tensor(Tensor{val.type, val.data});
  std::vector<int64_t> out;
  if (val.type.dtype == DType::i64) {
    for (int64_t x : t.as<int64_t>()) out.push_back(x);
  } else if (val.type.dtype == DType::i32) {
    for (int32_t x : t.as<int32_t>()) out.push_back(x);
  } else {
    unsupported(n, "operand " + val.name + " must be an integer tensor");
  }
  return out;
}

std::vector<double> Lowering::const_floats(const Node& n, ValueId v) const {
  const Value& val = fn_.value(v);
  if (!val.is_constant() || !val.data) unsupported(n, "operand " + val.name + " must be a constant with data");
  HostTensor t = HostTensor::from_tensor(Tensor{val.type, val.data});
  std::vector<double> out;
  switch (val.type.dtype) {
    case DType::f32: for (float x : t.as<float>()) out.push_back(x); break;
    case DType::f64: for (double x : t.as<double>()) out.push_back(x); break;
    case DType::i64: for (int64_t x : t.as<int64_t>()) out.push_back(static_cast<double>(x)); break;
    default: unsupported(n, "operand " + val.name + " must be a float or i64 tensor");
  }
  return out;
}

LoweredPipeline Lowering::run() {
  for (const Node& n : fn_.nodes) {
    if (!n.domain.empty() && n.domain != "ai.onnx") unsupported(n, "domain " + n.domain);
    auto it = op_lowerings().find(n.op);
    if (it == op_lowerings().end()) unsupported(n, "no Halide lowering for this op");
    for (ValueId o : n.outputs)
      if (o != kNoValue && fn_.value(o).type.dtype != DType::f32)
        unsupported(n, "output " + fn_.value(o).name + " is " + to_string(fn_.value(o).type) + " (only f32)");
    it->second(*this, n);
  }
  LoweredPipeline p;
  p.inputs = params_;
  p.reductions = reductions_;
  for (ValueId v : fn_.inputs) p.input_shapes.push_back(fn_.value(v).type.shape);
  for (size_t i = 0; i < fn_.outputs.size(); ++i) {
    const ValueId v = fn_.outputs[i];
    const Value& val = fn_.value(v);
    if (val.kind != ValueKind::Intermediate)
      throw KernelUnsupported("halide: output " + val.name + " is not computed by a node of the function");
    for (size_t j = 0; j < i; ++j)
      if (fn_.outputs[j] == v) throw KernelUnsupported("halide: output " + val.name + " is listed twice");
    p.outputs.push_back(tensor(v).func);
    p.output_shapes.push_back(val.type.shape);
  }
  return p;
}

}  // namespace tessera::halide
