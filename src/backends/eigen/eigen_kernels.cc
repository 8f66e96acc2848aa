// The eigen backend's GEMM, reduction and softmax steps (see eigen_kernels.h).
#include "backends/eigen/eigen_kernels.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/compilers/broadcast.h"
#include "backends/kernel.h"

namespace tessera::eigen {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapC = Eigen::Map<const RowMat>;
using Map = Eigen::Map<RowMat>;

[[noreturn]] void unsupported(const Node& node, const std::string& why) {
  throw KernelUnsupported("eigen: node '" + node.name + "' (" + node.op + "): " + why);
}

class GemmStep final : public Step {
 public:
  GemmStep(const Graph& fn, const Node& node) : g_(gemm_shape(fn, node)), out_(fn.value(g_.y).type.shape) {
    if (g_.c != kNoValue) c_strides_ = broadcast_strides(fn.value(g_.c).type.shape, out_);
  }
  void run(const FunctionFrame& f) override {
    const float *a = f.cf32(g_.a), *b = f.cf32(g_.b);
    float* y = f.f32(g_.y);
    if (g_.c != kNoValue) broadcast_fill(f.cf32(g_.c), c_strides_, out_, y, g_.beta, false);
    const Eigen::Index M = g_.M, N = g_.N, K = g_.K;
    for (int64_t bt = 0; bt < g_.batch; ++bt) {
      const float* ab = a + g_.a_offset[static_cast<size_t>(bt)];
      const float* bb = b + g_.b_offset[static_cast<size_t>(bt)];
      Map Y(y + bt * M * N, M, N);
      auto A = [&] { return g_.trans_a ? MapC(ab, K, M) : MapC(ab, M, K); };
      auto B = [&] { return g_.trans_b ? MapC(bb, N, K) : MapC(bb, K, N); };
      // Four spellings so Eigen sees the transposes at compile time (no copies).
      if (g_.c == kNoValue) Y.setZero();
      if (!g_.trans_a && !g_.trans_b) Y.noalias() += g_.alpha * (A() * B());
      else if (g_.trans_a && !g_.trans_b) Y.noalias() += g_.alpha * (A().transpose() * B());
      else if (!g_.trans_a) Y.noalias() += g_.alpha * (A() * B().transpose());
      else Y.noalias() += g_.alpha * (A().transpose() * B().transpose());
    }
  }

 private:
  GemmShape g_;
  Shape out_;
  std::vector<int64_t> c_strides_;
};

// x viewed as [outer, n, inner]: reduce over n (ReduceSum/Mean/Max), or softmax along n.
class AxisStep final : public Step {
 public:
  enum Kind { Sum, Mean, Max, Softmax };
  AxisStep(Kind k, ValueId x, ValueId y, int64_t outer, int64_t n, int64_t inner)
      : kind_(k), x_(x), y_(y), outer_(outer), n_(n), inner_(inner) {}
  void run(const FunctionFrame& f) override {
    const float* x = f.cf32(x_);
    float* y = f.f32(y_);
    for (int64_t o = 0; o < outer_; ++o) {
      const float* xo = x + o * n_ * inner_;
      if (kind_ == Softmax) {
        softmax(xo, y + o * n_ * inner_);
        continue;
      }
      float* yo = y + o * inner_;
      std::copy(xo, xo + inner_, yo);
      for (int64_t r = 1; r < n_; ++r) {
        const float* xr = xo + r * inner_;
        if (kind_ == Max) for (int64_t i = 0; i < inner_; ++i) yo[i] = std::max(yo[i], xr[i]);
        else for (int64_t i = 0; i < inner_; ++i) yo[i] += xr[i];
      }
      if (kind_ == Mean) for (int64_t i = 0; i < inner_; ++i) yo[i] /= static_cast<float>(n_);
    }
  }

 private:
  void softmax(const float* x, float* y) const {
    for (int64_t i = 0; i < inner_; ++i) {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t r = 0; r < n_; ++r) m = std::max(m, x[r * inner_ + i]);
      float s = 0.0f;
      for (int64_t r = 0; r < n_; ++r) s += (y[r * inner_ + i] = std::exp(x[r * inner_ + i] - m));
      const float inv = 1.0f / s;
      for (int64_t r = 0; r < n_; ++r) y[r * inner_ + i] *= inv;
    }
  }
  Kind kind_;
  ValueId x_, y_;
  int64_t outer_, n_, inner_;
};

std::unique_ptr<Step> make_axis_step(const Graph& fn, const Node& node) {
  const Shape& xs = fn.value(node.inputs[0]).type.shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (fn.value(node.inputs[0]).type.dtype != DType::f32) unsupported(node, "only f32");
  auto prod = [&](int64_t lo, int64_t hi) {
    int64_t p = 1;
    for (int64_t i = lo; i < hi; ++i) p *= xs[static_cast<size_t>(i)];
    return p;
  };
  const ValueId x = node.inputs[0], y = node.outputs[0];
  if (node.op == "Softmax") {
    const auto kind = AxisStep::Softmax;
    int64_t axis = attr_int(node.attrs, "axis", fn.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    if (fn.opset < 13) return std::make_unique<AxisStep>(kind, x, y, prod(0, axis), prod(axis, rank), 1);
    return std::make_unique<AxisStep>(kind, x, y, prod(0, axis), xs[static_cast<size_t>(axis)], prod(axis + 1, rank));
  }
  const auto kind = node.op == "ReduceSum" ? AxisStep::Sum : node.op == "ReduceMean" ? AxisStep::Mean : AxisStep::Max;
  std::vector<int64_t> axes = attr_ints(node.attrs, "axes");
  if (node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
    const Value& a = fn.value(node.inputs[1]);
    if (!a.is_constant() || !a.data || a.type.dtype != DType::i64) unsupported(node, "axes must be an i64 constant");
    axes.resize(static_cast<size_t>(a.type.numel()));
    if (!axes.empty()) std::memcpy(axes.data(), a.data->data(), axes.size() * sizeof(int64_t));   // empty: no pointer
  }
  if (axes.empty()) {
    if (attr_int(node.attrs, "noop_with_empty_axes", 0) != 0) unsupported(node, "noop_with_empty_axes");
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  if (axes.back() - axes.front() + 1 != static_cast<int64_t>(axes.size())) unsupported(node, "axes not contiguous");
  return std::make_unique<AxisStep>(kind, x, y, prod(0, axes.front()), prod(axes.front(), axes.back() + 1),
                                    prod(axes.back() + 1, rank));
}

}  // namespace

std::unique_ptr<Step> make_step(const Graph& fn, const Node& node) {
  if (node.op == "MatMul" || node.op == "Gemm") return std::make_unique<GemmStep>(fn, node);
  if (node.op == "ReduceSum" || node.op == "ReduceMean" || node.op == "ReduceMax" || node.op == "Softmax")
    return make_axis_step(fn, node);
  unsupported(node, "no eigen kernel for this op");
}

}  // namespace tessera::eigen
