// OnednnProgram: the GEMM-like anchors, Conv/ConvTranspose and MatMul/Gemm (see onednn_compiler.h).
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {

ConvGeometry conv_geometry(const Node& node, const Shape& xs, const Shape& ws, const Shape& ys, bool transposed) {
  const size_t sp = xs.size() - 2;
  ConvGeometry geo;
  const int64_t g = geo.groups = attr_int(node.attrs, "group", 1);
  const auto strides = attr_ints(node.attrs, "strides", std::vector<int64_t>(sp, 1));
  const auto dil = attr_ints(node.attrs, "dilations", std::vector<int64_t>(sp, 1));
  const auto pads = attr_ints(node.attrs, "pads", std::vector<int64_t>(2 * sp, 0));
  const auto outpad = attr_ints(node.attrs, "output_padding", std::vector<int64_t>(sp, 0));
  const std::string auto_pad = attr_string(node.attrs, "auto_pad", "NOTSET");
  Dims &st = geo.st, &dl = geo.dl, &pl = geo.pl, &pr = geo.pr, &k = geo.k;
  st.resize(sp), dl.resize(sp), pl.resize(sp), pr.resize(sp);
  k.assign(ws.begin() + 2, ws.end());
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = xs[2 + i], out = ys[2 + i], ek = (k[i] - 1) * dil[i] + 1;
    st[i] = strides[i];
    dl[i] = dil[i] - 1;
    const int64_t total = transposed ? strides[i] * (in - 1) + outpad[i] + ek - out
                                     : std::max<int64_t>(0, (out - 1) * strides[i] + ek - in);
    // SAME_UPPER puts the odd pad at the end, for Conv and ConvTranspose alike (ONNX's
    // test_convtranspose_autopad_same; ref's conv.cc); a ConvTranspose with output_shape derives
    // its pads the same way.
    if (auto_pad == "SAME_UPPER" || (transposed && auto_pad == "NOTSET" && node.attrs.count("output_shape"))) pl[i] = total / 2;
    else if (auto_pad == "SAME_LOWER") pl[i] = total - total / 2;
    else if (auto_pad == "VALID") pl[i] = 0;
    else pl[i] = pads[i];
    // Right padding from the inferred output size: covers auto_pad, output_padding, output_shape.
    pr[i] = transposed ? strides[i] * (in - 1) + ek - pl[i] - out : (out - 1) * strides[i] + ek - in - pl[i];
  }
  const int64_t C = xs[1], O = ys[1];
  int64_t K = 1;
  for (int64_t d : k) K *= d;
  Dims &wdims = geo.wdims, &wstrides = geo.wstrides;   // the ONNX weight bytes, seen with oneDNN's dims
  if (g > 1) wdims = {g, O / g, C / g};
  else wdims = {O, C};
  wdims.insert(wdims.end(), k.begin(), k.end());
  wstrides.assign(wdims.size(), 0);
  Dims ks(sp, 1);
  for (size_t i = sp; i-- > 1;) ks[i - 1] = ks[i] * k[i];
  const size_t o = wdims.size() - sp - 2;   // index of the O dim
  std::copy(ks.begin(), ks.end(), wstrides.end() - static_cast<std::ptrdiff_t>(sp));
  if (!transposed) {                        // [g][O/g][C/g][k]
    wstrides[o + 1] = K;
    wstrides[o] = (C / g) * K;
  } else {                                  // [g][C/g][O/g][k]
    wstrides[o] = K;
    wstrides[o + 1] = (O / g) * K;
  }
  if (g > 1) wstrides[0] = (C / g) * (O / g) * K;
  return geo;
}

// A convolution: its operands, then a forward convolution (algorithm and layouts tried best
// first) or a deconvolution.
void OnednnProgram::build_conv(size_t n, bool transposed) {
  const ConvOperands c = conv_operands(n, transposed);
  if (transposed) build_deconv(n, c);
  else build_forward_conv(n, c);
}

ConvOperands OnednnProgram::conv_operands(size_t n, bool transposed) {
  const Node& node = fn_.nodes[n];
  ConvOperands c;
  c.x = node.inputs[0];
  c.w = node.inputs[1];
  c.b = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  if (auto f = scale_fold_.find(n); f != scale_fold_.end()) {   // reads h, weights W * s (onednn_scale_fold.cc)
    c.x = f->second.source;
    c.scale = f->second.scale;
  }
  const Shape &xs = fn_.value(c.x).type.shape, &ws = fn_.value(c.w).type.shape, &ys = fn_.value(node.outputs[0]).type.shape;
  if (xs.size() < 3 || xs.size() > 5) unsupported(node, "only 1-D, 2-D and 3-D convolutions");
  c.sp = xs.size() - 2;
  c.geo = conv_geometry(node, xs, ws, ys, transposed);
  c.O = ys[1];
  c.user_w = memory::desc(c.geo.wdims, f32, c.geo.wstrides);
  c.xd = Dims(xs.begin(), xs.end());
  c.yd = Dims(ys.begin(), ys.end());
  c.has_bias = c.b != kNoValue;
  c.bias_md = plain_md({c.O});
  c.ct = compute_type();
  if (c.ct != f32) computes_in_bf16_ = true;
  return c;
}

std::vector<ConvTry> OnednnProgram::conv_tries(size_t n, const ConvOperands& c) {
  const int64_t g = c.geo.groups;
  const memory::data_type ct = c.ct;
  // A dense 3x3 stride-1 f32 convolution runs Winograd's algorithm where oneDNN has a kernel for
  // it (F(2x2,3x3) and F(4x4,3x3), AVX-512 CPUs): fewer multiplications per output, 1.5-2.2x
  // faster than its direct kernels on resnet18's 3x3 layers at batch 1 on a Zen 4 (docs/backends.md),
  // and relative errors of the same order (5e-7 on resnet18's output against ref). oneDNN's own
  // choice, convolution_auto, keeps direct below batch 16. Elsewhere, and where oneDNN declines
  // Winograd (AVX2 CPUs, other shapes, a post-op it cannot take), the direct algorithm.
  const bool winograd =
      c.sp == 2 && g == 1 && ct == f32 && c.geo.k == Dims{3, 3} && c.geo.st == Dims{1, 1} && c.geo.dl == Dims{0, 0};
  // A source already in channel blocks (a Winograd conv's output, or what follows one) keeps
  // them: the conv reads and writes that blocking where oneDNN has a kernel for it, instead of
  // format any, under which a 1x1 or strided conv picks nhwc and a reorder goes in front of it
  // and behind it. oneDNN's blocked kernels run these shapes as fast as its nhwc ones
  // (docs/backends.md), and a chain of convs then crosses no layout.
  std::optional<tag> blocks = ct == f32 ? channel_blocks(value_mem(c.x).get_desc(), c.xd) : std::nullopt;
  // Only the CPU's own block size is kept. Blocks of 8 on an AVX-512 CPU come from a conv that
  // chose them under format any (a grouped conv with 8 channels per group); kept, they pull the
  // convs after it onto oneDNN's AVX2 kernels (resnext50_32x4d's 1x1 convs at 16x16: jit_1x1:avx2
  // 0.59 ms in blocks of 8, brgconv_1x1:avx512_core 0.31 ms in nhwc, behind a 0.05 ms reorder).
  if (blocks && avx512_blocks() && *blocks != tag::aBcd16b) blocks.reset();
  // Where blocks start (onednn_blocks.cc): at a depthwise conv whose blocks would last, and in
  // the conv in front of it, which writes them from a source in format any. Single-oneDNN plans,
  // 1 thread, Zen 4 (docs/backends.md): mobilenet_v2 8.42-8.48 -> 7.66-7.88 ms, efficientnet_b0
  // 14.1-15.2 -> 13.4-13.6 ms; networks without depthwise convs are unchanged.
  if (!blocks && ct == f32 && avx512_blocks() && starts_blocks(n)) blocks = tag::aBcd16b;
  const bool writes_blocks = !blocks && ct == f32 && avx512_blocks() && feeds_block_start(n);
  // A grouped conv (not depthwise) between nhwc convs reads and writes nhwc itself. Under format
  // any oneDNN picks the blocks of its group width (4 or 8 channels) and the conv pays a reorder
  // in front and behind: ResNeXt's 32-group 3x3s, 0.04-0.11 ms each way at 128x32x32, for a
  // kernel that runs about as fast in nhwc (0.096 against 0.099 ms; 52 against 42 us at the
  // strided 256-channel one). See grouped_nhwc in onednn_blocks.cc.
  const bool nhwc = !blocks && ct == f32 && grouped_nhwc(n) && value_mem(c.x).get_desc() == memory::desc(c.xd, f32, tag::nhwc);
  // Winograd before direct, kept blocks (or nhwc) before format any; direct with any last
  // (conv_pd's fallback, not listed).
  std::vector<ConvTry> tries;
  if (winograd && blocks) tries.push_back({algorithm::convolution_winograd, blocks, blocks});
  if (winograd) tries.push_back({algorithm::convolution_winograd, std::nullopt, std::nullopt});
  if (blocks) tries.push_back({algorithm::convolution_direct, blocks, blocks});
  else if (writes_blocks) tries.push_back({algorithm::convolution_direct, std::nullopt, tag::aBcd16b});
  if (nhwc) tries.push_back({algorithm::convolution_direct, tag::nhwc, tag::nhwc});
  return tries;
}

dnnl::convolution_forward::primitive_desc OnednnProgram::conv_pd(const ConvOperands& c, const ConvTry& t,
                                                                 const dnnl::primitive_attr& a) const {
  const ConvGeometry& geo = c.geo;
  const memory::desc src = t.src ? memory::desc(c.xd, f32, *t.src) : any_md(c.xd, c.ct);
  const memory::desc dst = t.dst ? memory::desc(c.yd, f32, *t.dst) : any_md(c.yd);
  auto d = c.has_bias ? dnnl::convolution_forward::desc(prop_kind::forward_inference, t.alg, src, any_md(geo.wdims, c.ct), c.bias_md,
                                                        dst, geo.st, geo.dl, geo.pl, geo.pr)
                      : dnnl::convolution_forward::desc(prop_kind::forward_inference, t.alg, src, any_md(geo.wdims, c.ct), dst,
                                                        geo.st, geo.dl, geo.pl, geo.pr);
  return dnnl::convolution_forward::primitive_desc(d, a, engine_);
}

void OnednnProgram::build_forward_conv(size_t n, const ConvOperands& c) {
  if (pointwise_as_matmul(c)) return build_pointwise_matmul(n, c);
  const std::vector<ConvTry> tries = conv_tries(n, c);
  dnnl::primitive_attr attr;
  finish_anchor(n, attr, [&](const dnnl::primitive_attr& a) {
    for (const ConvTry& t : tries) try {
        auto pd = conv_pd(c, t, a);
        // A fixed layout only with a real kernel (oneDNN capped below AVX-512 would run ref:any).
        if ((!t.src && !t.dst) || std::string(pd.impl_info_str()).rfind("ref", 0) != 0) return pd;
      } catch (const dnnl::error&) {   // no such kernel for this ISA, shape, layout or post-op
      }
    return conv_pd(c, {algorithm::convolution_direct, std::nullopt, std::nullopt}, a);
  }, [&](const auto& pd) { return conv_args(c, pd.src_desc(), pd.weights_desc()); });
}

void OnednnProgram::build_deconv(size_t n, const ConvOperands& c) {
  const ConvGeometry& geo = c.geo;
  // Deconvolution's src and dst in nhwc, not `any`: with any, oneDNN 2.x picks channel blocks of
  // 16 and its jit:avx512_core deconvolution, padding a 1-channel output to 16 (PaddleOCR det's
  // last ConvTranspose, 24 -> 1 channels: 3.7 ms, and the Sigmoid after it falls to ref:any on
  // the padded blocks, 21 ms); in nhwc it takes its brgemm-based kernel.
  auto act_md = [&](const Dims& d, memory::data_type t) {
    return c.sp == 2 ? memory::desc(d, t, tag::nhwc) : any_md(d, t);
  };
  dnnl::primitive_attr attr;
  finish_anchor(n, attr, [&](const dnnl::primitive_attr& a) {
    auto d = c.has_bias ? dnnl::deconvolution_forward::desc(prop_kind::forward_inference, algorithm::deconvolution_direct,
                                                            act_md(c.xd, c.ct), any_md(geo.wdims, c.ct), c.bias_md,
                                                            act_md(c.yd, f32), geo.st, geo.dl, geo.pl, geo.pr)
                        : dnnl::deconvolution_forward::desc(prop_kind::forward_inference, algorithm::deconvolution_direct,
                                                            act_md(c.xd, c.ct), any_md(geo.wdims, c.ct), act_md(c.yd, f32),
                                                            geo.st, geo.dl, geo.pl, geo.pr);
    return dnnl::deconvolution_forward::primitive_desc(d, a, engine_);
  }, [&](const auto& pd) { return conv_args(c, pd.src_desc(), pd.weights_desc()); });
}

std::unordered_map<int, memory> OnednnProgram::conv_args(const ConvOperands& c, const memory::desc& src,
                                                         const memory::desc& weights) {
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, as_layout(c.x, src)},
                                       {DNNL_ARG_WEIGHTS, c.scale != kNoValue ? scaled_weights(c, weights) : weights_mem(c.w, c.user_w, weights)}};
  if (c.has_bias) args[DNNL_ARG_BIAS] = plain_mem(c.b, {c.O});
  return args;
}

Dims fold_rows(const Dims& a, size_t b_rank) {
  const size_t rank = a.size();
  if (b_rank > 2 || rank < 3) return a;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= a[i];
  if (rows == a[rank - 2]) return a;   // no batch to fold
  Dims folded(rank, 1);
  folded[rank - 2] = rows;
  folded[rank - 1] = a[rank - 1];
  return folded;
}

void OnednnProgram::build_matmul(size_t n) {
  const Node& node = fn_.nodes[n];
  const ValueId a = node.inputs[0], b = node.inputs[1], y = node.outputs[0];
  Shape as = fn_.value(a).type.shape, bs = fn_.value(b).type.shape;
  memory::desc a_md, b_md, bias_md;
  Dims yd;
  ValueId c = kNoValue;
  bool gemm2d = false, swapped_b = false;
  if (node.op == "Gemm") {
    if (attr_float(node.attrs, "alpha", 1.0) != 1.0) unsupported(node, "alpha != 1");
    const bool ta = attr_int(node.attrs, "transA", 0) != 0, tb = attr_int(node.attrs, "transB", 0) != 0;
    const int64_t M = ta ? as[1] : as[0], K = ta ? as[0] : as[1], N = tb ? bs[0] : bs[1];
    a_md = memory::desc({M, K}, f32, ta ? Dims{1, M} : Dims{K, 1});
    b_md = memory::desc({K, N}, f32, tb ? Dims{1, K} : Dims{N, 1});
    yd = {M, N};
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      c = node.inputs[2];
      if (attr_float(node.attrs, "beta", 1.0) != 1.0) unsupported(node, "beta != 1");
      bias_md = plain_md(padded(fn_.value(c).type.shape, 2));
    }
  } else {
    if (as.empty() || bs.empty()) unsupported(node, "scalar operands");
    gemm2d = bs.size() == 2 && as.size() > 2 && fn_.value(b).kind != ValueKind::Intermediate;
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    const size_t rank = std::max(as.size(), bs.size());
    const Dims ad = padded(as, rank), bd = padded(bs, rank);
    yd = ad;
    for (size_t i = 0; i + 2 < rank; ++i) yd[i] = std::max(ad[i], bd[i]);
    yd[rank - 1] = bd[rank - 1];
    // Rows folded: against a 2-D B every batch of A multiplies the same matrix, so A's batch
    // dims are rows of one GEMM, [1, .., 1, B*M, K] x [1, .., 1, K, N], instead of oneDNN's batch
    // loop of B small GEMMs (ConvNeXt's pointwise MatMuls over [1, H, W, C]; docs/backends.md).
    // Same rank, so a bias or scalar post-op operand ([1, .., 1, N]) reads as before; the plain
    // bytes of A and of the result are the same, and dst_mem gives the result its own dims.
    const Dims folded = fold_rows(ad, bs.size());
    if (folded != ad) {
      yd = folded;
      yd[rank - 1] = bd[rank - 1];
    }
    a_md = plain_md(folded);
    b_md = plain_md(bd);
    // B written by its Transpose with the last two dims swapped (K^T, onednn_operand_views.cc):
    // read in that layout, no copy back to plain.
    swapped_b = !gemm2d && bs.size() == rank && stored_swapped(b, bd);
    if (swapped_b) b_md = value_mem(b).get_desc();
    // Against constant weights (a function input or constant 2-D B), a GEMM of rank 2: [rows, K] x
    // [K, N]. oneDNN 2.x's brgemm matmul lays out weights of format any in its blocks (BA16a64b,
    // reordered once, onednn_program.cc's weights_mem) only at rank 2; at rank 3 and 4 it keeps
    // them plain and copies panels of B at every call, a cost that grows as rows shrink
    // (ConvNeXt's last stage, 16 rows x 768 x 3072: 65 GFLOP/s plain, docs/backends.md). The
    // plain bytes of A and of the result are the same; post-op operands fold the same way
    // (fuse_chain, post_op_rank_).
    if (gemm2d) {
      const int64_t K = ad[rank - 1], N = bd[rank - 1], rows = fn_.value(a).type.numel() / K;
      a_md = plain_md({rows, K});
      b_md = plain_md({K, N});
      yd = {rows, N};
    }
  }
  // Weights (a function input or constant) that every batch shares: oneDNN picks their layout
  // (format any; bf16: converted once, cached), also under a batched source (BERT's 1xSxH x HxH).
  const bool const_b = fn_.value(b).kind != ValueKind::Intermediate && bs.size() == 2;
  // In bf16 the operands are converted to plain bf16 (weights: once, cached; activations: a
  // reorder step per run, which also resolves a transposed view).
  const memory::data_type ct = compute_type();
  if (ct != f32) computes_in_bf16_ = true;
  const memory::desc a_ct = ct == f32 ? a_md : plain_md(a_md.dims(), ct);
  const memory::desc b_ct = ct == f32 ? b_md : plain_md(b_md.dims(), ct);
  dnnl::primitive_attr attr;
  post_op_rank_ = gemm2d ? 2 : 0;
  finish_anchor(n, attr, [&](const dnnl::primitive_attr& at) {
    const memory::desc w = const_b ? any_md(b_md.dims(), ct) : b_ct;
    auto d = c != kNoValue ? dnnl::matmul::desc(a_ct, w, bias_md, plain_md(yd)) : dnnl::matmul::desc(a_ct, w, plain_md(yd));
    return dnnl::matmul::primitive_desc(d, at, engine_);
  }, [&](const auto& pd) {
    const memory weights = const_b ? weights_mem(b, b_md, pd.weights_desc()) : (swapped_b ? value_mem(b) : compute_src(b, b_md, b_ct));
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, compute_src(a, a_md, a_ct)}, {DNNL_ARG_WEIGHTS, weights}};
    if (c != kNoValue) args[DNNL_ARG_BIAS] = view_mem(c, bias_md);
    return args;
  });
  post_op_rank_ = 0;
  (void)y;
}

}  // namespace tessera::onednn
