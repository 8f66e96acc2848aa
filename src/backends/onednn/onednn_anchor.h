// The post-op chain and anchor finishing shared by the op builders (see onednn_compiler.h).
// Internal to src/backends/onednn/; included by the onednn_ops*.cc files only.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>

#include "backends/compilers/broadcast.h"
#include "backends/onednn/onednn_program.h"
#include "backends/onednn/onednn_host_eltwise.h"
#include "backends/kernel.h"

namespace tessera::onednn {
namespace detail {

using dnnl::algorithm;
using dnnl::prop_kind;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

inline memory::desc any_md(const Dims& d, memory::data_type t = f32) { return memory::desc(d, t, tag::any); }

// The strides of a layout without channel blocks (plain, nhwc, a strided view); none for blocked
// layouts and windows (a non-zero offset).
inline std::optional<Dims> strides_of(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 || d.offset0 != 0) return std::nullopt;
  return Dims(d.format_desc.blocking.strides, d.format_desc.blocking.strides + d.ndims);
}

// Whether two stride lists address the same bytes for `dims` (dims of 1 carry no address).
inline bool same_addressing(const Dims& dims, const Dims& a, const Dims& b) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != 1 && a[i] != b[i]) return false;
  return true;
}

// The eltwise algorithm of a decomposed unary group: gelu_erf, or swish with alpha 1 (x * sigmoid(x)).
inline EltwiseOp unary_eltwise(const UnaryMatch& m) {
  switch (m.kind) {
    case UnaryMatch::Kind::swish: return EltwiseOp{algorithm::eltwise_swish, 1.0f, 0.0f};
    case UnaryMatch::Kind::hardswish: return EltwiseOp{algorithm::eltwise_hardswish, 0.0f, 0.0f};
    case UnaryMatch::Kind::gelu_erf: break;
  }
  return EltwiseOp{algorithm::eltwise_gelu_erf, 0.0f, 0.0f};
}

// The channel-blocked f32 layout (aBcd16b, aBcd8b) that `md`, a 4-D value of dims `d`, is stored
// in, or nullopt for plain, nhwc and every other layout.
inline std::optional<tag> channel_blocks(const memory::desc& md, const Dims& d) {
  if (d.size() != 4) return std::nullopt;
  for (const tag t : {tag::aBcd16b, tag::aBcd8b})
    if (md == memory::desc(d, f32, t)) return t;
  return std::nullopt;
}

// Whether this CPU runs oneDNN's kernels in 16-channel blocks (AVX-512), where a depthwise conv
// starts channel blocks (onednn_ops.cc). Elsewhere convs keep format `any`.
inline bool avx512_blocks() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return yes;
}

// Channels per block of a layout channel_blocks returns.
inline int64_t block_size(tag blocks) { return blocks == tag::aBcd16b ? 16 : 8; }

// `shape` right-aligned to rank `rank` with leading 1s.
inline Dims padded(const Shape& shape, size_t rank) {
  Dims d(rank, 1);
  std::copy(shape.begin(), shape.end(), d.end() - static_cast<std::ptrdiff_t>(shape.size()));
  return d;
}

// A post-op operand of dims `od` (right-aligned to the chain's dims `out`) with its leading dims
// folded into one, for an anchor that computes [rows, N] as a GEMM of rank 2: [rows or 1, last].
// nullopt when the leading dims broadcast only in part ([1, H, 1, C] against [1, H, W, C]).
inline std::optional<Dims> folded_operand(const Dims& od, const Dims& out) {
  int64_t lead = 1;
  for (size_t i = 0; i + 1 < od.size(); ++i) lead *= od[i];
  if (lead != 1 && od != out) return std::nullopt;
  return Dims{lead, od.back()};
}

inline bool commutative(algorithm a) {
  return a == algorithm::binary_add || a == algorithm::binary_mul || a == algorithm::binary_max ||
         a == algorithm::binary_min;
}

// An owned deep copy of `src` (eltwise, sum and binary entries, the only kinds tessera appends;
// a sum with its zero point and data type).
// Needed because primitive_attr::get_post_ops() returns a *weak* handle into the attribute: a
// post_ops copied from it (handles share) and appended to writes into that attribute, and reads
// freed memory once the attribute is replaced and destroyed (bert_encoder's Div+Mul+Add: double
// free / heap corruption).
// `count`: only the first that many entries (-1: all); `first`: from that entry on.
inline dnnl::post_ops owned_post_ops(const dnnl::post_ops& src, int count = -1, int first = 0) {
  dnnl::post_ops dst;
  for (int i = first; i < (count < 0 ? src.len() : count); ++i) {
    if (src.kind(i) == dnnl::primitive::kind::eltwise) {
      float scale, alpha, beta;
      algorithm alg;
      src.get_params_eltwise(i, scale, alg, alpha, beta);
      dst.append_eltwise(scale, alg, alpha, beta);
    } else if (src.kind(i) == dnnl::primitive::kind::sum) {
      float scale;
      int32_t zero_point;   // a u8 residual's (onednn_int8_chain.h)
      memory::data_type type;
      src.get_params_sum(i, scale, zero_point, type);
      dst.append_sum(scale, zero_point, type);
    } else if (src.kind(i) == dnnl::primitive::kind::binary) {
      algorithm alg;
      memory::desc md;
      src.get_params_binary(i, alg, md);
      dst.append_binary(alg, md);
    } else {
      throw KernelError("onednn: unexpected post-op kind in a chain");
    }
  }
  return dst;
}

// Appends e to po, or returns false where oneDNN would compute it wrong. A linear op right after
// another linear one becomes one: a2 (a1 x + b1) + b2 = (a1 a2) x + (a2 b1 + b2). Otherwise an
// eltwise algorithm already in the chain with other parameters is refused: oneDNN 2.7's AVX2
// convolutions apply every post-op of one algorithm with the first one's alpha and beta (Conv,
// * 3.7, - 0.36 gave 13.69 x; Conv, * 3.7, clip, * -0.36 gave * 3.7 twice).
inline bool append_eltwise_checked(dnnl::post_ops& po, const EltwiseOp& e) {
  const int last = po.len() - 1;
  float scale, alpha, beta;
  algorithm alg;
  if (e.alg == algorithm::eltwise_linear && last >= 0 && po.kind(last) == dnnl::primitive::kind::eltwise) {
    po.get_params_eltwise(last, scale, alg, alpha, beta);
    if (alg == algorithm::eltwise_linear && scale == 1.0f) {
      dnnl::post_ops merged = owned_post_ops(po, last);
      merged.append_eltwise(1.0f, algorithm::eltwise_linear, alpha * e.alpha, beta * e.alpha + e.beta);
      po = merged;
      return true;
    }
  }
  for (int i = 0; i <= last; ++i) {
    if (po.kind(i) != dnnl::primitive::kind::eltwise) continue;
    po.get_params_eltwise(i, scale, alg, alpha, beta);
    if (alg == e.alg && (alpha != e.alpha || beta != e.beta)) return false;
  }
  po.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
  return true;
}

// Whether `md` is f32 and covers a buffer of its own: no offset, and exactly as many bytes as its
// padded elements (not a view into a larger buffer, whose other values a pass over get_size()
// bytes would touch).
inline bool dense_f32(const memory::desc& md) {
  if (md.data.format_kind != dnnl_blocked || md.data.offset0 != 0 || md.data.data_type != dnnl_f32) return false;
  size_t elems = 1;
  for (int i = 0; i < md.data.ndims; ++i) elems *= static_cast<size_t>(md.data.padded_dims[i]);
  return md.get_size() == elems * sizeof(float);
}

// A new attribute with post-ops `po` and `base`'s source zero points and output scales (what an
// int8 anchor starts with: onednn_int8_variant.cc, onednn_int8_act_matmul.cc). A fresh attribute would drop them; a copy of `base` shares its
// handle, and so would change the anchor's own.
inline dnnl::primitive_attr with_post_ops(const dnnl::primitive_attr& base, const dnnl::post_ops& po) {
  dnnl::primitive_attr out;
  int mask = 0;
  std::vector<int32_t> zero_points;
  base.get_zero_points(DNNL_ARG_SRC, mask, zero_points);
  if (!zero_points.empty() && !(zero_points.size() == 1 && zero_points[0] == 0)) out.set_zero_points(DNNL_ARG_SRC, mask, zero_points);
  std::vector<float> scales;   // an int8 matmul of two computed operands scales its result here
  base.get_output_scales(mask, scales);
  if (!scales.empty() && !(scales.size() == 1 && scales[0] == 1.0f)) out.set_output_scales(mask, scales);
  out.set_post_ops(po);
  return out;
}

// The host pass (onednn_host_eltwise.h) that can take the last post-op of `po` off the anchor:
// SiLU (swish with alpha 1) or erf-GELU.
inline std::optional<HostEltwise> host_eltwise_at_end(const dnnl::post_ops& po) {
  const int last = po.len() - 1;
  if (last < 0 || po.kind(last) != dnnl::primitive::kind::eltwise) return std::nullopt;
  float scale, alpha, beta;
  algorithm alg;
  po.get_params_eltwise(last, scale, alg, alpha, beta);
  if (scale != 1.0f) return std::nullopt;
  if (alg == algorithm::eltwise_swish && alpha == 1.0f) return HostEltwise::silu;
  if (alg == algorithm::eltwise_gelu_erf) return HostEltwise::gelu_erf;
  return std::nullopt;
}

}  // namespace detail

using namespace detail;

template <typename TryPd>
ValueId OnednnProgram::fuse_chain(size_t anchor, ValueId value, ValueId& sum_source, dnnl::primitive_attr& attr,
                                  std::vector<std::pair<int, memory>>& binary_args, TryPd&& try_pd) {
  // oneDNN 2.x runs a deconvolution with any post-op 10-50x slower under the same implementation
  // name (PaddleOCR det: a 2x2 stride-2 ConvTranspose + Add 55 ms against 1 ms for the two apart;
  // + Relu 19-40 ms, + Sigmoid 27-70 ms against 2-4 ms), so the check on implementation names in
  // finish_anchor cannot catch it: nothing is fused into a deconvolution.
  if (fn_.nodes[anchor].op == "ConvTranspose") return value;
  dnnl::post_ops po = owned_post_ops(attr.get_post_ops());   // never a weak handle (see owned_post_ops)
  const Shape out_shape = fn_.value(value).type.shape;
  const bool fold = post_op_rank_ != 0 && post_op_rank_ < out_shape.size();   // a rank-2 GEMM (build_matmul)
  const size_t op_rank = fold ? post_op_rank_ : out_shape.size();
  while (!frame_.is_function_output(value)) {
    if (auto g = unary_of_.find(value); g != unary_of_.end()) {   // erf-GELU or SiLU of the chain's value
      dnnl::post_ops trial = owned_post_ops(po);
      const EltwiseOp e = unary_eltwise(g->second);
      trial.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
      dnnl::primitive_attr a = with_post_ops(attr, trial);
      if (!try_pd(a)) break;
      po = trial;
      attr = a;
      absorb(g->second.nodes);
      value = g->second.out;
      continue;
    }
    if (consumers_[static_cast<size_t>(value)].size() != 1) break;
    const size_t c = static_cast<size_t>(consumers_[static_cast<size_t>(value)][0]);
    const Node& node = fn_.nodes[c];
    if (node.outputs.size() != 1 || fn_.value(node.outputs[0]).type.shape != out_shape) break;
    dnnl::post_ops trial = owned_post_ops(po);
    std::optional<std::pair<int, memory>> src1;   // post-op index; its memory comes from `pending`
    std::function<memory()> pending;
    std::vector<std::pair<int, float>> scalar_operands;   // binary post-ops with a scalar operand
    if (auto ops = eltwise_ops(fn_, node)) {   // before binaries: x + scalar is an eltwise
      if (eltwise_source(fn_, node) != value) break;
      bool ok = true;
      for (const EltwiseOp& e : *ops) ok = ok && append_eltwise_checked(trial, e);
      if (!ok) {
        // A linear op oneDNN cannot take as a second eltwise_linear (append_eltwise_checked):
        // PaddleOCR's learnable affine after a HardSwish post-op, a * hardswish(a1 x + b1) + b.
        // As binary post-ops with a broadcast scalar operand instead (a separate injector).
        if (ops->size() != 1 || (*ops)[0].alg != algorithm::eltwise_linear) break;
        trial = owned_post_ops(po);
        const memory::desc one = onednn::plain_md(Dims(op_rank, 1));
        if ((*ops)[0].alpha != 1.0f) {
          trial.append_binary(algorithm::binary_mul, one);
          scalar_operands.push_back({trial.len() - 1, (*ops)[0].alpha});
        }
        if ((*ops)[0].beta != 0.0f) {
          trial.append_binary(algorithm::binary_add, one);
          scalar_operands.push_back({trial.len() - 1, (*ops)[0].beta});
        }
      }
    } else if (auto alg = binary_alg(node.op); alg && node.inputs.size() == 2) {
      if (node.inputs[0] == node.inputs[1]) break;
      const int side = node.inputs[0] == value ? 0 : 1;
      const ValueId other = node.inputs[static_cast<size_t>(1 - side)];
      const Value& o = fn_.value(other);
      if ((side == 1 && !commutative(*alg)) || !broadcasts_to(o.type.shape, out_shape)) break;
      if (o.kind == ValueKind::Intermediate && static_cast<size_t>(o.producer) >= anchor) break;  // not ready
      // A full-size Add operand (a residual) becomes a `sum` post-op: the anchor's dst is filled
      // with the residual first (finish_anchor) and the kernel accumulates into it. A binary
      // post-op with a full-size operand would push oneDNN 2.x's blocked convolutions onto im2col
      // GEMM (finish_anchor refuses that), leaving the Add to run apart with reorders around it.
      if (*alg == algorithm::binary_add && o.type.shape == out_shape && sum_source == kNoValue) {
        dnnl::post_ops with_sum = owned_post_ops(po);
        with_sum.append_sum(1.0f);
        dnnl::primitive_attr a = with_post_ops(attr, with_sum);
        if (try_pd(a)) {
          po = with_sum;
          attr = a;
          sum_source = other;
          absorbed_[c] = 1;
          value = node.outputs[0];
          continue;
        }
      }
      // The operand is read as it lives when it has the chain's shape and another order (an nhwc
      // convolution output), plain otherwise. Its memory is made only once the fusion holds:
      // making a plain one may add a reorder step, wasted (and a layout round trip for every later
      // reader) if oneDNN then declines.
      Dims od = padded(o.type.shape, out_shape.size());
      const bool as_is = o.type.shape == out_shape && value_mem(other).get_desc() != onednn::plain_md(od);
      if (fold) {   // the GEMM's [rows, N]: a plain operand folded the same way
        const std::optional<Dims> f = folded_operand(od, padded(out_shape, out_shape.size()));
        if (!f || as_is) break;
        od = *f;
      }
      trial.append_binary(*alg, as_is ? value_mem(other).get_desc() : onednn::plain_md(od));
      src1 = {trial.len() - 1, memory()};
      pending = [this, other, od, as_is] { return as_is ? value_mem(other) : plain_mem(other, od); };
    } else {
      break;
    }
    dnnl::primitive_attr a = with_post_ops(attr, trial);
    if (!try_pd(a)) break;
    po = trial;
    attr = a;
    if (src1) binary_args.push_back({src1->first, pending()});
    for (const auto& [index, v] : scalar_operands) {
      memory k = new_mem(onednn::plain_md(Dims(op_rank, 1)));
      *static_cast<float*>(k.get_data_handle()) = v;
      binary_args.push_back({index, k});
    }
    absorbed_[c] = 1;
    value = node.outputs[0];
  }
  return value;
}

template <typename MakePd, typename Pd>
ValueId OnednnProgram::fuse_keeping_impl(size_t anchor, ValueId value, ValueId& sum_source, dnnl::primitive_attr& attr,
                                         std::vector<std::pair<int, memory>>& binary_args, MakePd& make_pd, std::optional<Pd>& pd,
                                         const std::string& bare_impl) {
  return fuse_chain(anchor, value, sum_source, attr, binary_args, [&](const dnnl::primitive_attr& a) {
    try {
      Pd trial = make_pd(a);
      if (trial.impl_info_str() != bare_impl) return false;
      pd = std::move(trial);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  });
}

template <typename MakePd, typename Wire>
void OnednnProgram::finish_anchor(size_t n, dnnl::primitive_attr attr, MakePd&& make_pd, Wire&& wire, ValueId out_value,
                                  const std::optional<memory::desc>& kept_as) {
  const Node& node = fn_.nodes[n];
  using Pd = decltype(make_pd(attr));
  std::optional<Pd> pd;
  try {
    pd = make_pd(attr);
  } catch (const dnnl::error& e) {
    unsupported(node, std::string("oneDNN declines it: ") + e.what());
  }
  // A post-op is fused only when oneDNN keeps the implementation it picked for the bare anchor:
  // some post-ops (a binary one with a plain-layout operand on a blocked convolution) make it fall
  // back from brgconv/jit kernels to its im2col GEMM or reference code, 5-10x slower than running
  // the op on its own. The measured costs of single candidates would then promise what the fused
  // function cannot keep.
  const std::string bare_impl = pd->impl_info_str();
  std::vector<std::pair<int, memory>> binary_args;
  const ValueId chain_start = out_value != kNoValue ? out_value : node.outputs[0];
  ValueId sum_source = kNoValue;
  const ValueId out = fuse_keeping_impl(n, chain_start, sum_source, attr, binary_args, make_pd, pd, bare_impl);
  // A SiLU or erf-GELU that ends the chain runs as the host pass instead (onednn_host_eltwise.h:
  // oneDNN's post-op costs about twice Eigen's), where the anchor keeps its implementation and
  // its dst layout without it and writes dense memory.
  std::optional<HostEltwise> pass;
  if (const dnnl::post_ops po = owned_post_ops(attr.get_post_ops()); const auto op = host_eltwise_at_end(po)) {
    dnnl::primitive_attr a = with_post_ops(attr, owned_post_ops(po, po.len() - 1));
    try {
      Pd trial = make_pd(a);
      if (trial.impl_info_str() == bare_impl && trial.dst_desc() == pd->dst_desc() && dense_f32(trial.dst_desc())) {
        pd = std::move(trial);
        pass = op;
      }
    } catch (const dnnl::error&) {
    }
  }
  std::unordered_map<int, memory> args = wire(*pd);
  for (auto& [idx, m] : binary_args) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1] = m;
  // `kept_as`: the value lives in that layout and the primitive writes it through its own dst
  // desc over the same bytes (a pointwise conv run as a matmul: nhwc seen as [H*W, O] rows).
  const memory::desc value_md = kept_as ? *kept_as : pd->dst_desc();
  memory dst;
  const bool in_place = sum_source != kNoValue && residual_in_place(n, sum_source, out, value_md);
  if (in_place) {
    // The kernel accumulates into the residual's own buffer (seen with the GEMM's rows where
    // those are its dims, build_matmul).
    const memory own = value_mem(sum_source);
    dst = own.get_desc() == value_md ? own : memory(value_md, engine_, own.get_data_handle());
    mem_[static_cast<size_t>(out)] = own.get_desc() == value_md ? dst : memory(plain_md(dims_of(out)), engine_, own.get_data_handle());
  } else {
    dst = dst_mem(out, value_md);
  }
  // A value bound per run or stored another way (a Concat's slab) gets the rows written into a
  // buffer of its own first, then copied.
  memory target = dst;
  if (kept_as && (dst.get_data_handle() == nullptr || !(dst.get_desc() == *kept_as))) target = new_mem(*kept_as);
  // The sum post-op adds the residual; a dst with other dims than the value (a MatMul's folded
  // rows, plain) reads it through a plain view with the dst's dims.
  if (sum_source != kNoValue && !in_place)
    add_reorder(target.get_desc().dims() == dims_of(sum_source) ? value_mem(sum_source) : view_mem(sum_source, target.get_desc()), target);
  args[DNNL_ARG_DST] = kept_as ? memory(pd->dst_desc(), engine_, target.get_data_handle()) : target;
  anchor_step_ = steps_.size();
  steps_.push_back({dnnl::primitive(pd->get()), std::move(args), {}});
  if (pass) {
    const auto n = static_cast<int64_t>(target.get_desc().get_size() / sizeof(float));
    const HostEltwise op = *pass;
    steps_.push_back({{}, {{DNNL_ARG_SRC, target}, {DNNL_ARG_DST, target}}, [op, target, n] { eltwise_in_place(op, static_cast<float*>(target.get_data_handle()), n); },
                      op == HostEltwise::silu ? "host:silu" : "host:gelu_erf"});
  }
  if (target.get() != dst.get()) add_reorder(target, dst);
}

}  // namespace tessera::onednn
