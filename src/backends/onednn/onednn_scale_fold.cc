// A per-channel scale of a conv's source folded into the conv's weights (oneDNN functions).
//
// A squeeze-and-excitation block ends with y = h * s, s one scale per channel of h ([1, C, 1, 1],
// from the global pool of h itself), and y's only reader is the next conv, a 1x1 projection:
//
//   GlobalAveragePool(h) -> .. -> Sigmoid -> s ;  Mul(h, s) -> y ;  Conv(y, W) -> z
//   becomes   W' = W * s  (per input channel, a binary step over O*C*k weights) ;  Conv(h, W') -> z
//
// which is the same sum, conv(h * s, W)[o] = sum_c W[o, c] s[c] h[c] = conv(h, W')[o], padding
// included (zero times s is zero). The Mul was a pass over all C*H*W values of h, read and
// written (efficientnet_b0: 16 such passes, 0.2 ms of 5 ms of primitives); W' costs the binary
// over the O*C*k weights and their reorder into the conv's layout, each run (W' depends on s).
// So the fold is taken where those are the smaller: 4 * O * k <= H * W (the early, large stages;
// the late ones, 7x7 with hundreds of output channels, keep the Mul).
//
// Conditions: batch 1 (s per image); s broadcasts as [1, C, 1, ..]; y is read only by the conv
// and is no function output; the conv has one group and weights of plain bytes (an input or a
// constant); f32 (the bf16 and int8 variants reorder or quantize the weights themselves); and h
// has another reader besides the Mul (the pool of the SE branch), so that h's producer could not
// have taken the Mul as a binary post-op instead, which costs nothing extra.
#include "backends/onednn/onednn_program.h"

namespace tessera::onednn {

void OnednnProgram::find_scale_folds() {
  if (precision_ != Precision::f32) return;
  for (size_t m = 0; m < fn_.nodes.size(); ++m) {
    const Node& mul = fn_.nodes[m];
    if (mul.op != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1 || absorbed_[m] || unary_at_.count(m)) continue;
    const ValueId y = mul.outputs[0];
    if (frame_.is_function_output(y) || consumers_[static_cast<size_t>(y)].size() != 1) continue;
    const auto n = static_cast<size_t>(consumers_[static_cast<size_t>(y)][0]);
    const Node& conv = fn_.nodes[n];
    if (conv.op != "Conv" || conv.inputs.size() < 2 || conv.inputs[0] != y || absorbed_[n] || int8_at_.count(n)) continue;
    if (attr_int(conv.attrs, "group", 1) != 1) continue;
    const Shape& ys = fn_.value(y).type.shape;
    if (ys.size() < 3 || ys[0] != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const ValueId h = mul.inputs[static_cast<size_t>(side)], s = mul.inputs[static_cast<size_t>(1 - side)];
      const Value &hv = fn_.value(h), &sv = fn_.value(s);
      if (hv.type.shape != ys || consumers_[static_cast<size_t>(h)].size() < 2) continue;
      Shape per_channel(ys.size(), 1);
      per_channel[1] = ys[1];
      if (sv.type.shape != per_channel) continue;
      const Value& w = fn_.value(conv.inputs[1]);
      if (w.kind == ValueKind::Intermediate || !plain_boundary(conv.inputs[1]) || w.type.shape.size() != ys.size()) continue;
      int64_t spatial = 1, kernel = 1;
      for (size_t i = 2; i < ys.size(); ++i) {
        spatial *= ys[i];
        kernel *= w.type.shape[i];
      }
      if (4 * w.type.shape[0] * kernel > spatial) continue;
      scale_fold_[n] = {h, s};
      absorbed_[m] = 1;
      break;
    }
  }
}

memory OnednnProgram::scaled_weights(const ConvOperands& c, const memory::desc& want) {
  // W' = W * s over the ONNX weight bytes ([O][C][k..], plain), s seen as [1, C, 1, ..].
  const memory::desc w_md = plain_md(c.geo.wdims);
  Dims sd(c.geo.wdims.size(), 1);
  sd[1] = c.geo.wdims[1];
  const memory scaled = new_mem(w_md);
  // A dense 1x1 kernel: the same bytes as the matrix [O, C] times the row [1, C], which oneDNN's
  // jit binary kernel takes; over [O, C, 1, 1] its per-channel broadcast fell to `ref:any`
  // (0.1-0.4 ms a run for RegNet's 48x48 and 104x104 weights).
  const bool pointwise = c.geo.groups == 1 && c.geo.k == Dims{1, 1};
  const Dims wd = c.geo.wdims;
  const memory w = pointwise ? view_mem(c.w, plain_md({wd[0], wd[1]})) : view_mem(c.w, c.user_w);
  const memory s = pointwise ? plain_mem(c.scale, {1, wd[1]}) : plain_mem(c.scale, sd);
  const memory dst = pointwise ? memory(plain_md({wd[0], wd[1]}), engine_, scaled.get_data_handle()) : scaled;
  dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_mul, w.get_desc(), s.get_desc(), dst.get_desc()), engine_);
  steps_.push_back({dnnl::binary(pd), {{DNNL_ARG_SRC_0, w}, {DNNL_ARG_SRC_1, s}, {DNNL_ARG_DST, dst}}, {}});
  if (want == w_md) return scaled;
  memory to = new_mem(want);
  add_reorder(scaled, to);
  return to;
}

}  // namespace tessera::onednn
