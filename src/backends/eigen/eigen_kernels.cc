// The eigen backend's GEMM, conv, reduction and softmax steps (see eigen_kernels.h).
#include "backends/eigen/eigen_kernels.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/compilers/broadcast.h"
#include "tessera/kernel.h"

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

// Conv2D: per image and group, col[C/g*kh*kw, OH*OW] = im2col(x); y_g = W_g * col (+ bias).
class ConvStep final : public Step {
 public:
  ConvStep(const Graph& fn, const Node& node) : x_(node.inputs[0]), w_(node.inputs[1]), y_(node.outputs[0]) {
    if (node.inputs.size() > 2) b_ = node.inputs[2];
    const Shape &xs = fn.value(x_).type.shape, &ws = fn.value(w_).type.shape, &ys = fn.value(y_).type.shape;
    if (xs.size() != 4) unsupported(node, "only 2-D convolution");
    for (ValueId v : {x_, w_, y_})
      if (fn.value(v).type.dtype != DType::f32) unsupported(node, "only f32");
    N_ = xs[0]; C_ = xs[1]; H_ = xs[2]; W_ = xs[3];
    O_ = ys[1]; OH_ = ys[2]; OW_ = ys[3]; KH_ = ws[2]; KW_ = ws[3];
    g_ = attr_int(node.attrs, "group", 1);
    const auto st = attr_ints(node.attrs, "strides", {1, 1}), dl = attr_ints(node.attrs, "dilations", {1, 1});
    const auto pads = attr_ints(node.attrs, "pads", {0, 0, 0, 0});
    const std::string auto_pad = attr_string(node.attrs, "auto_pad", "NOTSET");
    SH_ = st[0]; SW_ = st[1]; DH_ = dl[0]; DW_ = dl[1];
    auto pad_begin = [&](int i, int64_t in, int64_t out, int64_t k) -> int64_t {
      const int64_t total = std::max<int64_t>(0, (out - 1) * st[static_cast<size_t>(i)] + (k - 1) * dl[static_cast<size_t>(i)] + 1 - in);
      if (auto_pad == "SAME_UPPER") return total / 2;
      if (auto_pad == "SAME_LOWER") return total - total / 2;
      if (auto_pad == "VALID") return 0;
      return pads[static_cast<size_t>(i)];
    };
    PH_ = pad_begin(0, H_, OH_, KH_);
    PW_ = pad_begin(1, W_, OW_, KW_);
    direct_ = KH_ == 1 && KW_ == 1 && SH_ == 1 && SW_ == 1 && PH_ == 0 && PW_ == 0 && OH_ == H_ && OW_ == W_;
    if (!direct_) col_.resize(static_cast<size_t>((C_ / g_) * KH_ * KW_ * OH_ * OW_));
  }
  size_t scratch_bytes() const override { return col_.size() * sizeof(float); }
  void run(const FunctionFrame& f) override {
    const float *x = f.cf32(x_), *w = f.cf32(w_);
    float* y = f.f32(y_);
    const int64_t Cg = C_ / g_, Og = O_ / g_, P = OH_ * OW_, Kc = Cg * KH_ * KW_;
    for (int64_t n = 0; n < N_; ++n)
      for (int64_t g = 0; g < g_; ++g) {
        const float* xg = x + (n * C_ + g * Cg) * H_ * W_;
        const float* col = direct_ ? xg : im2col(xg, Cg);
        Map Y(y + (n * O_ + g * Og) * P, Og, P);
        Y.noalias() = MapC(w + g * Og * Kc, Og, Kc) * MapC(col, Kc, P);
        if (b_ != kNoValue) Y.colwise() += Eigen::Map<const Eigen::VectorXf>(f.cf32(b_) + g * Og, Og);
      }
  }

 private:
  const float* im2col(const float* x, int64_t Cg) {
    float* col = col_.data();
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t kh = 0; kh < KH_; ++kh)
        for (int64_t kw = 0; kw < KW_; ++kw) {
          float* row = col + ((c * KH_ + kh) * KW_ + kw) * OH_ * OW_;
          for (int64_t oh = 0; oh < OH_; ++oh) {
            const int64_t ih = oh * SH_ - PH_ + kh * DH_;
            float* r = row + oh * OW_;
            if (ih < 0 || ih >= H_) {
              std::fill(r, r + OW_, 0.0f);
              continue;
            }
            const float* xr = x + (c * H_ + ih) * W_;
            for (int64_t ow = 0; ow < OW_; ++ow) {
              const int64_t iw = ow * SW_ - PW_ + kw * DW_;
              r[ow] = iw >= 0 && iw < W_ ? xr[iw] : 0.0f;
            }
          }
        }
    return col;
  }
  ValueId x_, w_, y_, b_ = kNoValue;
  int64_t N_, C_, H_, W_, O_, OH_, OW_, KH_, KW_, g_, SH_, SW_, DH_, DW_, PH_, PW_;
  bool direct_;
  std::vector<float> col_;
};

// x viewed as [outer, n, inner]: reduce over n (ReduceSum/Mean/Max), or softmax along n.
class AxisStep final : public Step {
 public:
  enum Kind { Sum, Mean, Max, Softmax, LogSoftmax };
  AxisStep(Kind k, ValueId x, ValueId y, int64_t outer, int64_t n, int64_t inner)
      : kind_(k), x_(x), y_(y), outer_(outer), n_(n), inner_(inner) {}
  void run(const FunctionFrame& f) override {
    const float* x = f.cf32(x_);
    float* y = f.f32(y_);
    for (int64_t o = 0; o < outer_; ++o) {
      const float* xo = x + o * n_ * inner_;
      if (kind_ >= Softmax) {
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
      if (kind_ == LogSoftmax) {
        const float ls = std::log(s);
        for (int64_t r = 0; r < n_; ++r) y[r * inner_ + i] = x[r * inner_ + i] - m - ls;
      } else {
        const float inv = 1.0f / s;
        for (int64_t r = 0; r < n_; ++r) y[r * inner_ + i] *= inv;
      }
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
  if (node.op == "Softmax" || node.op == "LogSoftmax") {
    const auto kind = node.op == "Softmax" ? AxisStep::Softmax : AxisStep::LogSoftmax;
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
  if (node.op == "Conv") return std::make_unique<ConvStep>(fn, node);
  if (node.op == "ReduceSum" || node.op == "ReduceMean" || node.op == "ReduceMax" || node.op == "Softmax" ||
      node.op == "LogSoftmax")
    return make_axis_step(fn, node);
  unsupported(node, "no eigen kernel for this op");
}

}  // namespace tessera::eigen
