// ElementwiseProgram (see elementwise_program.h).
#include "backends/eigen/elementwise_program.h"

#include <omp.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>

#include "backends/compilers/broadcast.h"
#include "backends/kernel.h"

namespace tessera::eigen {
namespace {

constexpr int64_t kBlock = 256;

float scalar_constant(const Graph& fn, const Node& node, size_t i, float dflt) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return dflt;
  const Value& v = fn.value(node.inputs[i]);
  if (!v.is_constant() || !v.data || v.type.dtype != DType::f32 || v.type.numel() != 1)
    throw KernelUnsupported("eigen: node '" + node.name + "': bound must be an f32 scalar constant");
  float f;
  std::memcpy(&f, v.data->data(), sizeof f);
  return f;
}

}  // namespace

std::optional<EOp> elementwise_op(const std::string& op) {
  static const std::map<std::string, EOp> table = {
      {"Relu", EOp::Relu}, {"Abs", EOp::Abs}, {"Neg", EOp::Neg}, {"Sqrt", EOp::Sqrt},
      {"Reciprocal", EOp::Reciprocal}, {"Sigmoid", EOp::Sigmoid}, {"Tanh", EOp::Tanh}, {"Exp", EOp::Exp},
      {"Log", EOp::Log}, {"Erf", EOp::Erf}, {"Clip", EOp::Clip}, {"LeakyRelu", EOp::LeakyRelu},
      {"Add", EOp::Add}, {"Sub", EOp::Sub}, {"Mul", EOp::Mul},
      {"Div", EOp::Div}, {"Pow", EOp::Pow}, {"Max", EOp::Max}, {"Min", EOp::Min}};
  auto it = table.find(op);
  return it == table.end() ? std::nullopt : std::optional<EOp>(it->second);
}

int ElementwiseProgram::reg_of(const Graph& fn, ValueId v) {
  for (const auto& [val, reg] : value_reg_)
    if (val == v) return reg;
  const TensorType& t = fn.value(v).type;
  if (t.dtype != DType::f32) throw KernelUnsupported("eigen: value '" + fn.value(v).name + "' is not f32");
  if (!broadcasts_to(t.shape, shape_))
    throw KernelUnsupported("eigen: '" + fn.value(v).name + "' does not broadcast to " + shape_to_string(shape_));
  Load l{v, num_regs_++, broadcast_strides(t.shape, shape_), t.shape == shape_, t.numel() == 1};
  loads_.push_back(l);
  value_reg_.emplace_back(v, l.reg);
  return l.reg;
}

void ElementwiseProgram::add(const Graph& fn, const Node& node) {
  const auto op = elementwise_op(node.op);
  if (!op || node.outputs.size() != 1 || fn.value(node.outputs[0]).type.shape != shape_)
    throw KernelUnsupported("eigen: node '" + node.name + "' (" + node.op + ") is not fusable here");
  const bool binary = *op >= EOp::Add;
  if (binary != (node.inputs.size() == 2) && !(*op == EOp::Clip))
    throw KernelUnsupported("eigen: node '" + node.name + "' (" + node.op + "): wrong operand count");
  Instr in{*op, 0, reg_of(fn, node.inputs[0]), -1, 0.0f, 0.0f};
  if (binary) in.b = reg_of(fn, node.inputs[1]);
  const auto& a = node.attrs;
  switch (*op) {
    case EOp::Clip:
      in.p0 = node.inputs.size() > 1 ? scalar_constant(fn, node, 1, -FLT_MAX) : static_cast<float>(attr_float(a, "min", -FLT_MAX));
      in.p1 = node.inputs.size() > 2 ? scalar_constant(fn, node, 2, FLT_MAX) : static_cast<float>(attr_float(a, "max", FLT_MAX));
      break;
    case EOp::LeakyRelu: in.p0 = static_cast<float>(attr_float(a, "alpha", 0.01)); break;
    default: break;
  }
  in.dst = num_regs_++;
  code_.push_back(in);
  value_reg_.emplace_back(node.outputs[0], in.dst);
}

void ElementwiseProgram::store(ValueId v) {
  for (const auto& [val, reg] : value_reg_)
    if (val == v) {
      stores_.emplace_back(v, reg);
      return;
    }
}

std::vector<ValueId> ElementwiseProgram::loads() const {
  std::vector<ValueId> out;
  for (const Load& l : loads_) out.push_back(l.value);
  return out;
}

void ElementwiseProgram::run(const FunctionFrame& frame) const {
  int64_t total = 1;
  for (int64_t d : shape_) total *= d;
  const int64_t blocks = (total + kBlock - 1) / kBlock;
#pragma omp parallel if (total > 32768)
  {
    std::vector<float> regs(static_cast<size_t>(num_regs_ * kBlock));
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b)
      run_block(frame, b * kBlock, std::min(kBlock, total - b * kBlock), regs);
  }
}

void ElementwiseProgram::run_block(const FunctionFrame& frame, int64_t base, int64_t len,
                                   std::vector<float>& regs) const {
  auto reg = [&](int r) { return regs.data() + static_cast<size_t>(r) * kBlock; };
  for (const Load& l : loads_) {
    const float* src = frame.cf32(l.value);
    float* dst = reg(l.reg);
    if (l.contiguous) {
      std::memcpy(dst, src + base, static_cast<size_t>(len) * sizeof(float));
    } else if (l.scalar) {
      std::fill(dst, dst + len, src[0]);
    } else {   // general broadcast: walk the multi-index of base..base+len
      const size_t rank = shape_.size();
      std::vector<int64_t> idx(rank);
      int64_t rem = base, off = 0;
      for (size_t k = rank; k-- > 0;) {
        idx[k] = rem % shape_[k];
        rem /= shape_[k];
        off += idx[k] * l.strides[k];
      }
      for (int64_t j = 0; j < len; ++j) {
        dst[j] = src[off];
        for (size_t k = rank; k-- > 0;) {
          off += l.strides[k];
          if (++idx[k] < shape_[k]) break;
          off -= l.strides[k] * shape_[k];
          idx[k] = 0;
        }
      }
    }
  }
  for (const Instr& in : code_) {
    float* d = reg(in.dst);
    const float* x = reg(in.a);
    const float* y = in.b >= 0 ? reg(in.b) : nullptr;
    const float p0 = in.p0, p1 = in.p1;
    switch (in.op) {
      case EOp::Relu: for (int64_t j = 0; j < len; ++j) d[j] = x[j] > 0.0f ? x[j] : 0.0f; break;
      case EOp::Abs: for (int64_t j = 0; j < len; ++j) d[j] = std::fabs(x[j]); break;
      case EOp::Neg: for (int64_t j = 0; j < len; ++j) d[j] = -x[j]; break;
      case EOp::Sqrt: for (int64_t j = 0; j < len; ++j) d[j] = std::sqrt(x[j]); break;
      case EOp::Reciprocal: for (int64_t j = 0; j < len; ++j) d[j] = 1.0f / x[j]; break;
      case EOp::Sigmoid: for (int64_t j = 0; j < len; ++j) d[j] = 1.0f / (1.0f + std::exp(-x[j])); break;
      case EOp::Tanh: for (int64_t j = 0; j < len; ++j) d[j] = std::tanh(x[j]); break;
      case EOp::Exp: for (int64_t j = 0; j < len; ++j) d[j] = std::exp(x[j]); break;
      case EOp::Log: for (int64_t j = 0; j < len; ++j) d[j] = std::log(x[j]); break;
      case EOp::Erf: for (int64_t j = 0; j < len; ++j) d[j] = std::erf(x[j]); break;
      case EOp::Clip: for (int64_t j = 0; j < len; ++j) d[j] = std::min(std::max(x[j], p0), p1); break;
      case EOp::LeakyRelu: for (int64_t j = 0; j < len; ++j) d[j] = x[j] >= 0.0f ? x[j] : p0 * x[j]; break;
      case EOp::Add: for (int64_t j = 0; j < len; ++j) d[j] = x[j] + y[j]; break;
      case EOp::Sub: for (int64_t j = 0; j < len; ++j) d[j] = x[j] - y[j]; break;
      case EOp::Mul: for (int64_t j = 0; j < len; ++j) d[j] = x[j] * y[j]; break;
      case EOp::Div: for (int64_t j = 0; j < len; ++j) d[j] = x[j] / y[j]; break;
      case EOp::Pow: for (int64_t j = 0; j < len; ++j) d[j] = std::pow(x[j], y[j]); break;
      case EOp::Max: for (int64_t j = 0; j < len; ++j) d[j] = std::max(x[j], y[j]); break;
      case EOp::Min: for (int64_t j = 0; j < len; ++j) d[j] = std::min(x[j], y[j]); break;
    }
  }
  for (const auto& [v, r] : stores_)
    std::memcpy(frame.f32(v) + base, reg(r), static_cast<size_t>(len) * sizeof(float));
}

}  // namespace tessera::eigen
