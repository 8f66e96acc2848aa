// u8 values between int8 convolutions in an `onednn_int8` function (onednn_int8_variant.cc).
// Internal to src/backends/onednn/; included by onednn_int8_variant.cc and onednn_int8_chain.cc.
//
// Terms. An int8 conv's *chain* is the post-ops fuse_chain fuses into it (Relu, Clip, a residual
// Add as a `sum`, ...); its *end* is the value the chain computes. A value is *kept* in u8 when
// it ends an int8 conv's chain and every reader is an int8 conv reading it as its source (at
// least one) or an Add: the producer then writes u8 at the value's own scale and zero point (its
// calibrated range, as every reader's source is quantized), and no f32 copy of it exists unless
// an f32 reader asks for one (value_mem: a dequantizing reorder, made on first use).
//
//   before: conv_a  u8 -> f32 y ; reorder f32 y -> u8 ; conv_b  u8 -> f32
//   after:  conv_a  u8 -> u8 y (post-ops ..., * 1/sy, + zy) ; conv_b  u8 -> f32
//
// The producer's post-ops stay in real units (the accumulator times sx * sw[o], + bias, Relu,
// ...), then one eltwise_linear by 1/sy; oneDNN adds the destination zero point, rounds and
// saturates. A residual sum into a kept value reads the dst's old contents through the sum
// post-op's scale and zero point: the kept residual's own u8 bytes (its buffer itself when
// nothing reads it later, residual_in_place's rule). An f32 residual keeps the result f32: held
// in the u8 dst it would have to take the result's range, which clips it (a ReLU'd block output
// has no negative steps, the residual before the ReLU has). The u8 rounding is the one the
// reader's source reorder did before, at the same scale, so the numbers move only by float
// rounding order; a residual read in u8 rounds once more (half a step of its own scale) where it
// was exact in f32.
//
// An f32 residual (a downsampling block's 1x1 projection or 3x3 branch, before the ReLU; a
// function input) cannot go through the u8 dst: held there at the result's range it would lose
// its negative values. Its `sum` becomes a binary_add post-op reading the f32 tensor in its own
// layout, in real units before the Relu, and the result is still written u8:
//
//   before: conv_d u8 -> f32 y (post-ops ..., sum(r f32), Relu) ; reorder f32 y -> u8 ; conv_b
//   after:  conv_d u8 -> u8 y (post-ops ..., binary_add(r f32), Relu, * 1/sy, + zy) ; conv_b
//
// The block's output then stays u8 for the next block's first conv and its residual sum. oneDNN
// may pick another of its VNNI kernels for a full-tensor binary operand (jit_int8_1x1 where the
// bare conv ran brgconv_1x1); that is accepted, its GEMM or reference code is not.
//
// A conv whose chain sums a kept residual into an f32 result fills its dst by one dequantizing
// reorder from the residual's u8 bytes.
//
// Where the chain that fuse_chain builds ends elsewhere than predicted (predicted_chain_end: the
// graph's eltwise ops and one residual Add, without oneDNN's word), or oneDNN declines the u8
// destination under the same implementation, the conv writes f32 as before. Trade-off: a kept
// value read also by an f32 reader (an Add not fused as a sum) costs one dequantizing pass
// where the producer wrote f32 before, against one quantizing pass saved per int8 reader.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>

#include "backends/onednn/onednn_act_quant.h"
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {

// A value's u8 quantization (onednn_act_quant.h), nullopt where it has no usable range.
inline std::optional<ActQuant> act_quant(const Value& v) { return v.range ? u8_quant(*v.range) : std::nullopt; }

// `po` (a kept value's chain in real units) with its `sum` entry reading the dst's old contents
// as u8 at (sum_scale, sum_zero_point), or, given `f32_residual` (the residual's f32 memory
// desc), a binary_add reading that f32 tensor instead; and a final * 1 / out_scale. nullopt where
// oneDNN would compute it wrong (append_eltwise_checked). `sum_index` receives the sum's position.
inline std::optional<dnnl::post_ops> u8_output_post_ops(const dnnl::post_ops& po, float sum_scale, int32_t sum_zero_point, float out_scale,
                                                        const memory::desc* f32_residual = nullptr, int* sum_index = nullptr) {
  dnnl::post_ops out;
  for (int i = 0; i < po.len(); ++i) {
    if (po.kind(i) == dnnl::primitive::kind::sum) {
      if (sum_index) *sum_index = i;
      if (f32_residual) out.append_binary(dnnl::algorithm::binary_add, *f32_residual);
      else out.append_sum(sum_scale, sum_zero_point);
      continue;
    }
    if (po.kind(i) == dnnl::primitive::kind::eltwise) {
      float scale, alpha, beta;
      dnnl::algorithm alg;
      po.get_params_eltwise(i, scale, alg, alpha, beta);
      out.append_eltwise(scale, alg, alpha, beta);
    } else {
      dnnl::algorithm alg;
      memory::desc md;
      po.get_params_binary(i, alg, md);
      out.append_binary(alg, md);
    }
  }
  if (!append_eltwise_checked(out, EltwiseOp{dnnl::algorithm::eltwise_linear, 1.0f / out_scale, 0.0f})) return std::nullopt;
  return out;
}

// oneDNN's JIT int8 kernels (brgconv, jit_int8, jit_int8_1x1, ... on VNNI), not its GEMM or
// reference code.
inline bool vnni_int8_impl(const std::string& impl) {
  return (impl.rfind("brg", 0) == 0 || impl.rfind("jit_int8", 0) == 0) && impl.find("vnni") != std::string::npos;
}

template <typename MakePd, typename Wire>
void OnednnProgram::finish_int8_conv(size_t n, dnnl::primitive_attr attr, memory::data_type& dst_type, MakePd&& make_pd, Wire&& wire,
                                     ValueId end) {
  using Pd = decltype(make_pd(attr));
  std::optional<Pd> pd;
  try {
    pd = make_pd(attr);
  } catch (const dnnl::error& e) {
    unsupported(fn_.nodes[n], std::string("oneDNN declines it: ") + e.what());
  }
  const std::string bare_impl = pd->impl_info_str();
  std::vector<std::pair<int, memory>> binary_args;
  ValueId sum_source = kNoValue;
  const ValueId out = fuse_keeping_impl(n, fn_.nodes[n].outputs[0], sum_source, attr, binary_args, make_pd, pd, bare_impl);
  // The u8 destination, where the chain ended as predicted and oneDNN keeps its implementation.
  std::optional<ActQuant> kept;
  const auto residual = sum_source != kNoValue ? u8_of_.find(sum_source) : u8_of_.end();
  // An f32 residual (a projection conv's output, a function input) is read by a binary_add
  // post-op in its own layout, in real units before Relu: the result is written u8 at its own
  // range, and the residual's negative values are summed exactly, not clipped.
  std::optional<memory> f32_residual;
  int sum_index = -1;
  if (out == end && sum_source != kNoValue && residual == u8_of_.end() && keeps_u8(out)) {
    const memory r = value_mem(sum_source);
    if (r.get_desc().dims() == pd->dst_desc().dims()) f32_residual = r;
  }
  if (out == end && keeps_u8(out) && (sum_source == kNoValue || residual != u8_of_.end() || f32_residual)) {
    const ActQuant oq = *act_quant(fn_.value(out));
    const bool u8_residual = residual != u8_of_.end();
    const memory::desc residual_md = f32_residual ? f32_residual->get_desc() : memory::desc();
    const auto po = u8_output_post_ops(owned_post_ops(attr.get_post_ops()), u8_residual ? residual->second.scale : 1.0f,
                                       u8_residual ? residual->second.zero_point : 0, oq.scale, f32_residual ? &residual_md : nullptr,
                                       &sum_index);
    if (po) {
      dnnl::primitive_attr a = with_post_ops(attr, *po);
      if (oq.zero_point != 0) a.set_zero_points(DNNL_ARG_DST, 0, {oq.zero_point});
      dst_type = memory::data_type::u8;
      try {
        Pd trial = make_pd(a);
        if (trial.impl_info_str() == pd->impl_info_str() || (f32_residual && vnni_int8_impl(trial.impl_info_str()))) {
          pd = std::move(trial);
          kept = oq;
        }
      } catch (const dnnl::error&) {
      }
      if (!kept) dst_type = memory::data_type::f32;
    }
  }
  std::unordered_map<int, memory> args = wire(*pd);
  for (auto& [idx, m] : binary_args) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1] = m;
  const memory::desc dst_md = pd->dst_desc();
  memory dst;
  if (kept) {
    if (f32_residual) {
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(sum_index) | DNNL_ARG_SRC_1] = *f32_residual;
      dst = new_mem(dst_md);
    } else if (sum_source == kNoValue) {
      dst = new_mem(dst_md);
    } else if (u8_in_place(n, sum_source, dst_md)) {   // the residual's u8 bytes, read at its own scale
      dst = residual->second.mem;
    } else {
      dst = new_mem(dst_md);
      add_reorder(residual->second.mem, dst);
    }
    u8_of_[out] = U8Value{dst, kept->scale, kept->zero_point};
  } else if (sum_source != kNoValue && residual_in_place(n, sum_source, out, dst_md)) {
    dst = value_mem(sum_source);
    mem_[static_cast<size_t>(out)] = dst;
  } else {
    dst = dst_mem(out, dst_md);
    if (residual != u8_of_.end() && !mem_[static_cast<size_t>(sum_source)]) add_dequantize(sum_source, dst);   // one pass, no f32 copy
    else if (sum_source != kNoValue) add_reorder(value_mem(sum_source), dst);
  }
  args[DNNL_ARG_DST] = dst;
  anchor_step_ = steps_.size();
  steps_.push_back({dnnl::primitive(pd->get()), std::move(args), {}});
}

}  // namespace tessera::onednn
