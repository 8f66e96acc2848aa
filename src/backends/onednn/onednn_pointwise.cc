// Pointwise (1x1) convolutions over few pixels as one oneDNN matmul.
//
// Terms. A *pointwise conv* is a dense 2-D Conv with a 1x1 kernel, stride 1 and no padding: for
// every pixel, y[:, p] = W x[:, p] + b. Over channels-last (nhwc) data its source is a row-major
// [P, C] matrix of P = N*H*W pixels, its output the [P, O] matrix, and the conv is the GEMM
//
//   x (nhwc [N,C,H,W]) seen as [P, C]  x  W^T [C, O]  ->  y (nhwc [N,O,H,W]) seen as [P, O]
//
// with no copy on either side: the matmul's src and dst are views of the values' own bytes, and
// W^T is the ONNX weight [O, C] read with strides (1, C), reordered once into oneDNN's layout.
//
// Why. With few pixels (the 7x7 and 4x4 stages of CNNs at 224 and 128) the conv is weight-bound:
// each weight is used P times and comes from beyond L2 in every run. oneDNN 2.6 runs it as
// brgconv_1x1 with output-channel blocks of 32 or 48 picked by its own heuristic; where the
// weights are padded to those blocks (440 channels: 32-blocks) its kernel ran 10-15% slower
// than its brgemm matmul on the same operands (64-column weight blocks), on a Zen 5 core with the
// weights flushed before each call (docs/benchmarks.md, "1x1 convolutions against MLAS"). Where
// pixels are many the two are level and the conv's own kernels stay.
//
// Not needed for correctness: the rule only picks which primitive computes the same product. The
// value keeps its nhwc layout, so the ops around see nothing of it; post-ops (bias, eltwise, a
// residual `sum`) are the matmul's, fused by the same chain as a conv's (finish_anchor).
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {

std::optional<int64_t> OnednnProgram::pointwise_rows(const ConvOperands& c) const {
  const ConvGeometry& g = c.geo;
  if (c.ct != f32 || c.sp != 2 || g.groups != 1 || g.k != Dims{1, 1} || g.st != Dims{1, 1}) return std::nullopt;
  if (g.pl != Dims{0, 0} || g.pr != Dims{0, 0} || c.scale != kNoValue) return std::nullopt;
  const std::optional<memory>& x = mem_[static_cast<size_t>(c.x)];
  // The source as it already lives: dense nhwc with an address (not bound per run).
  if (!x || x->get_data_handle() == nullptr || !(x->get_desc() == memory::desc(c.xd, f32, tag::nhwc))) return std::nullopt;
  return c.xd[0] * c.xd[2] * c.xd[3];
}

bool OnednnProgram::pointwise_as_matmul(const ConvOperands& c) const {
  const std::optional<int64_t> rows = pointwise_rows(c);
  return rows && *rows <= kPointwiseMatmulRows;
}

void OnednnProgram::build_pointwise_matmul(size_t n, const ConvOperands& c) {
  const int64_t P = *pointwise_rows(c), C = c.xd[1], O = c.O;
  const memory::desc src_md({P, C}, f32, tag::ab), dst_md({P, O}, f32, tag::ab), bias_md = plain_md({1, O});
  const memory::desc user_w({C, O}, f32, Dims{1, C});   // ONNX [O][C][1][1] read as W^T
  const memory x = value_mem(c.x);
  dnnl::primitive_attr attr;
  finish_anchor(n, attr, [&](const dnnl::primitive_attr& a) {
    auto d = c.has_bias ? dnnl::matmul::desc(src_md, any_md({C, O}), bias_md, dst_md) : dnnl::matmul::desc(src_md, any_md({C, O}), dst_md);
    return dnnl::matmul::primitive_desc(d, a, engine_);
  }, [&](const auto& pd) {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src_md, engine_, x.get_data_handle())},
                                         {DNNL_ARG_WEIGHTS, weights_mem(c.w, user_w, pd.weights_desc())}};
    if (c.has_bias) args[DNNL_ARG_BIAS] = plain_mem(c.b, {1, O});
    return args;
  }, kNoValue, memory::desc(c.yd, f32, tag::nhwc));
}

}  // namespace tessera::onednn
