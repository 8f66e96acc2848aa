// Lowering a function to one Halide pipeline: every value becomes a Halide Func, every node an
// expression over its producers' Funcs, and only the function's outputs are realized.
//
//   fn(x: f32[1,64,80,80], s: f32[1,64,160,160]) { Resize(x) ─▶ Add(., s) ─▶ Relu } -> y
//     x, s  ─▶ ImageParams            (Halide order: innermost dimension first, so a row-major
//                                      tensor [n,c,h,w] is the Halide buffer (w,h,c,n))
//     Resize ─▶ up(w,h,c,n)  = x(w/2, h/2, c, n)
//     Add    ─▶ add(w,h,c,n) = up(w,h,c,n) + s(w,h,c,n)
//     Relu   ─▶ y(w,h,c,n)   = max(add(w,h,c,n), 0)
//     Pipeline({y}): the schedule (halide_schedule.h) decides what is inlined, tiled, vectorized.
//
// Nothing is computed here: a Func is a definition. Each op family lives in its own file
// (halide_ops_*.cc) behind the small registry below; an op the registry lacks, a dtype other than
// f32 or an attribute value an op file does not implement is KernelUnsupported, naming the node.
//
// Compile-time operands (Reshape's shape, Slice's starts, Resize's scales, Clip bounds, pads,
// reduction axes) must be constants with data: they are read here and baked into the
// expressions. Other constants (small tensors such as a bias vector) become constant Buffers
// embedded in the pipeline; a float constant without data gets FunctionFrame's seeded random
// values, so it computes what ref computes.
//
// Index arithmetic is in int32, Halide's index type: a function with a tensor of 2^31 elements
// or more is refused.
#pragma once

#include <Halide.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera::halide {

// One tensor value as a Func of `shape.size()` pure variables (Halide order: reversed).
struct HTensor {
  Halide::Func func;
  Shape shape;
  int rank() const { return static_cast<int>(shape.size()); }
  // The element at `idx`, given in tensor order (idx[0] = outermost dimension).
  Halide::Expr at(const std::vector<Halide::Expr>& idx) const;
};

// The element of `t` that broadcasts (numpy rules: aligned on the last dimension, an extent-1
// dimension reads index 0) to output index `idx` of a tensor of shape `out`.
Halide::Expr broadcast_at(const HTensor& t, const std::vector<Halide::Expr>& idx, const Shape& out);

// Pure variables for a tensor of rank r, in tensor order.
std::vector<Halide::Var> index_vars(int rank);
std::vector<Halide::Expr> as_exprs(const std::vector<Halide::Var>& vars);
// Defines f over `vars` (tensor order) as `e`.
void define(Halide::Func& f, const std::vector<Halide::Var>& vars, const Halide::Expr& e);

class Lowering;
using OpLowering = std::function<void(Lowering&, const Node&)>;
using OpLowerings = std::map<std::string, OpLowering, std::less<>>;

// The op families (one file each). register_* add their ops to the table.
void register_elementwise_ops(OpLowerings& table);   // halide_ops_elementwise.cc
void register_layout_ops(OpLowerings& table);        // halide_ops_layout.cc
void register_reduce_ops(OpLowerings& table);        // halide_ops_reduce.cc
void register_pool_ops(OpLowerings& table);          // halide_ops_pool.cc
void register_resize_ops(OpLowerings& table);        // halide_ops_resize.cc
const OpLowerings& op_lowerings();
bool lowers(std::string_view op);

// The lowered pipeline: parameters in fn.inputs order, outputs in fn.outputs order.
struct LoweredPipeline {
  std::vector<Halide::ImageParam> inputs;
  std::vector<Shape> input_shapes;
  std::vector<Halide::Func> outputs;
  std::vector<Shape> output_shapes;
  std::vector<HTensor> reductions;   // Funcs with an update (what the fallback computes at root)
};

class Lowering {
 public:
  explicit Lowering(const Graph& fn);
  // Lowers every node; throws KernelUnsupported for anything it cannot express.
  LoweredPipeline run();

  const Graph& fn() const { return fn_; }
  // The Func of an input, constant or already lowered node output.
  const HTensor& tensor(ValueId v);
  // Records node output `v`; `func` must already be defined.
  void set(ValueId v, Halide::Func func);
  // Records a reduction whose result several consumer elements read (to be computed at root).
  void note_reduction(Halide::Func f, Shape shape) { reductions_.push_back(HTensor{std::move(f), std::move(shape)}); }
  // A new Func named after node output `v` (debug names show in Halide's schedules and errors).
  Halide::Func func_for(ValueId v, const std::string& suffix = "") const;
  // Node output `y` as `e` over `vars`: a new Func (func_for), defined and recorded (set).
  void define_output(ValueId y, const std::vector<Halide::Var>& vars, const Halide::Expr& e);

  // Compile-time operands: the constant's data (KernelUnsupported if `v` is not a constant with data).
  std::vector<int64_t> const_ints(const Node& n, ValueId v) const;
  std::vector<double> const_floats(const Node& n, ValueId v) const;
  bool is_constant(ValueId v) const;
  bool has_input(const Node& n, size_t i) const { return i < n.inputs.size() && n.inputs[i] != kNoValue; }
  const Shape& shape(ValueId v) const { return fn_.value(v).type.shape; }

 private:
  const Graph& fn_;
  std::vector<std::optional<HTensor>> tensors_;   // by ValueId
  std::vector<Halide::ImageParam> params_;
  std::vector<HTensor> reductions_;
};

// KernelUnsupported naming the node: "halide: <op> <name>: <why>".
[[noreturn]] void unsupported(const Node& n, const std::string& why);
// Normalizes an axis in [-rank, rank) (KernelUnsupported otherwise).
int normalize_axis(const Node& n, int64_t axis, int rank);

}  // namespace tessera::halide
