// Precision variant `onednn_int8`: a MatMul whose both operands are computed (attention's Q·K^T
// and softmax·V), each quantized per tensor from its calibrated range (Value::range, set by an
// accuracy budget on both operands: src/runtime/int8_calibration.h).
//
//   fn(q f32, kt f32) { MatMul(q, kt) ─▶ Mul(1/sqrt d) } -> s f32        q.range, kt.range
//     qq  = reorder(q,  scale 1/sq, zero point zq) u8        sq, zq: u8_quant(q.range)
//     ktq = reorder(kt, scale 1/sk) s8                        sk = max|kt.range| / 127
//     s   = matmul_u8s8(qq - zq, ktq) * (sq * sk)   (output scale), then the f32 post-ops
//
// The right operand is s8 and symmetric because oneDNN's int8 matmul takes no zero point on its
// weights argument; a softmax output (>= 0) is the left operand with zero point 0 and all 256
// levels, Q or K either side with a zero point near 128 or a symmetric step. Per tensor, not per
// channel: the operand changes from run to run, so its scales cannot come from its values at
// build time the way constant weights' do, and a per-column scale of a computed operand would
// need a calibrated range per column. Batch dimensions broadcast as ONNX MatMul's do (padded
// to the larger rank).
//
// The two reorders cost memory traffic a constant-weight matmul does not pay (its weights are
// quantized once); whether int8 pays here is for the measured cost to say, and its error for the
// budget (each such anchor's end-to-end error is measured like any other's).
#include "backends/onednn/onednn_act_quant.h"
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {

bool OnednnProgram::build_act_matmul_int8(size_t n) {
  constexpr auto u8 = memory::data_type::u8, s8 = memory::data_type::s8;
  const Node& node = fn_.nodes[n];
  if (node.op != "MatMul" || node.inputs.size() != 2) return false;
  const ValueId a = node.inputs[0], b = node.inputs[1];
  const Value &av = fn_.value(a), &bv = fn_.value(b);
  if (!av.range || !bv.range || bv.is_constant() || av.type.dtype != DType::f32 || bv.type.dtype != DType::f32) return false;
  const std::optional<ActQuant> qa = u8_quant(*av.range), qb = s8_quant(*bv.range);
  if (!qa || !qb) return false;
  const Shape &as = av.type.shape, &bs = bv.type.shape, &ys = fn_.value(node.outputs[0]).type.shape;
  if (as.size() < 2 || bs.size() < 2) return false;
  const size_t rank = std::max(as.size(), bs.size());
  if (ys.size() != rank) return false;
  const Dims ad = padded(as, rank), bd = padded(bs, rank), yd(ys.begin(), ys.end());
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {qa->scale * qb->scale});
  if (qa->zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {qa->zero_point});
  const memory::desc a_u8 = plain_md(ad, u8);
  auto make = [&](const dnnl::primitive_attr& at) {
    dnnl::matmul::desc d(a_u8, any_md(bd, s8), plain_md(yd));
    return dnnl::matmul::primitive_desc(d, at, engine_);
  };
  try {   // the probe: oneDNN may have no int8 kernel for these batch dims or this zero point
    const auto pd = make(attr);
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return false;   // reference int8 code: slower than f32
  } catch (const dnnl::error&) {
    return false;
  }
  computes_in_int8_ = true;
  finish_anchor(n, attr, make, [&](const auto& pd) {
    return std::unordered_map<int, memory>{
        {DNNL_ARG_SRC, shared_quantize(a, view_mem(a, plain_md(ad)), a_u8, qa->scale, qa->zero_point)},
        {DNNL_ARG_WEIGHTS, quantize_source(view_mem(b, plain_md(bd)), pd.weights_desc(), qb->scale, 0)}};
  });
  return true;
}

}  // namespace tessera::onednn
