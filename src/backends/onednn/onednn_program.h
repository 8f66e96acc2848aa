// OnednnProgram: the compiled form of one function for oneDNN, and the builder that makes it
// (see onednn_compiler.h for the design). Internal to src/backends/onednn/.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "backends/compilers/function_frame.h"
#include "backends/onednn/onednn_patterns.h"
#include "backends/onednn/onednn_qdq.h"
#include "ir/boundary_layout.h"
#include "tessera/graph.h"

namespace tessera::onednn {

using dnnl::memory;
using Dims = memory::dims;

// One step of a program: a primitive, or (when `host` is set) work done on the host: a plain
// copy (Concat of plain memories: a few memcpys, where oneDNN's concat picked a 5-10x slower
// kernel), or the SiLU / GELU pass after an anchor (onednn_host_eltwise.h).
// CPU primitives run synchronously on the stream, so the two kinds interleave in order. A host
// step lists the memories it reads and writes in `args` as a primitive would (DNNL_ARG_SRC..,
// DNNL_ARG_DST) for the memory plan (onednn_memory_plan.h); one that lists none keeps every
// buffer of its function where it is.
struct Step {
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
  std::function<void()> host;
  std::string host_name;   // a host step's entry in implementations(): "host:concat", "host:silu"
};

// A channel Concat followed by a channel shuffle (onednn_shuffle.cc): the shuffle's nodes after
// the Concat, its groups, the Concat's non-empty inputs, the channel Slices before it that it may
// read in their sources (deferred: not built unless it cannot), the channel Slices of the
// shuffled value it writes instead of the value (parts; none: it writes the value), and the
// shuffled value.
struct ShuffleMatch {
  int64_t groups = 0;
  std::vector<ValueId> inputs;
  std::vector<NodeId> nodes, deferred, parts;
  ValueId out = kNoValue;
};

// A reorder of a weight (function input or constant) into a primitive's layout, redone only when
// the input's pointer changes.
struct CachedReorder {
  ValueId value;
  memory from, to;
  dnnl::reorder prim;
  const void* done_for = nullptr;
};

// Plain row-major descriptor (a scalar as [1]).
memory::desc plain_md(const Dims& dims, memory::data_type t = memory::data_type::f32);

// oneDNN's type for a tensor's dtype: f32, u8, s8 or s32 (KernelUnsupported for the others).
memory::data_type dnnl_type(DType t);

// A convolution's geometry in oneDNN's terms (onednn_ops.cc): strides, dilations (minus one),
// left/right padding from the inferred output size, kernel dims, and the ONNX weight bytes seen
// with oneDNN's weight dims ([g][O/g][C/g][k], or [g][C/g][O/g][k] for ConvTranspose).
struct ConvGeometry {
  int64_t groups = 1;
  Dims st, dl, pl, pr, k, wdims, wstrides;
};
ConvGeometry conv_geometry(const Node& node, const Shape& xs, const Shape& ws, const Shape& ys, bool transposed);

// What every step of building a Conv/ConvTranspose reads (OnednnProgram::build_conv): its values,
// dims, geometry, the ONNX weights as oneDNN sees them, and the type it computes in.
struct ConvOperands {
  ValueId x = kNoValue, w = kNoValue, b = kNoValue;
  ValueId scale = kNoValue;   // a per-channel scale of the source folded into the weights (onednn_scale_fold.cc)
  bool has_bias = false;
  size_t sp = 0;    // spatial dims
  int64_t O = 0;    // output channels
  Dims xd, yd;
  ConvGeometry geo;
  memory::desc user_w, bias_md;
  memory::data_type ct = memory::data_type::f32;
};
// One algorithm and fixed source/destination layouts (none: format any) a forward conv tries.
struct ConvTry {
  dnnl::algorithm alg;
  std::optional<memory::format_tag> src, dst;
};
// A MatMul's A dims with its batch dims folded into rows, [1, .., 1, B*M, K], when B (of rank
// `b_rank`, after ONNX's 1-D promotion) is one matrix for every batch; `a` itself otherwise.
Dims fold_rows(const Dims& a, size_t b_rank);

// Strides that show `to` over the bytes of dims `from` laid out with `from_strides`, without a
// copy; none when the reshape needs one. numpy's rule: each run of old dims that is merged or
// split must be one contiguous stretch (a channel split of nhwc [N,C,H,W] into [N,2,C/2,H,W] is;
// merging nhwc's C with H is not).
std::optional<Dims> reshape_strides(const Dims& from, const Dims& from_strides, const Dims& to);

// One eltwise post-op / eltwise primitive.
struct EltwiseOp {
  dnnl::algorithm alg;
  float alpha = 0.0f, beta = 0.0f;
};

// The data type convolutions and matmuls read their source and weights in (onednn_compiler.h):
// f32 for `onednn`, bf16 for `onednn_bf16`, u8 x s8 for `onednn_int8` (where the source has a
// calibrated range: onednn_int8_variant.cc). Accumulation and every other value stay f32.
enum class Precision { f32, bf16, int8 };

class OnednnProgram {
 public:
  static constexpr bool kOwnThreads = false;   // OpenMP's team (program_function.h)
  // `layouts` (empty: all plain): the memory order of each input and output at the boundary; an
  // nhwc one is bound as a oneDNN nhwc memory, so a conv that picks nhwc reads or writes it as is.
  OnednnProgram(const Graph& fn, dnnl::engine engine, Precision precision = Precision::f32, const BoundaryLayouts& layouts = {});

  void run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs);
  size_t workspace_bytes() const { return owned_bytes_ + frame_.owned_bytes(); }
  // Bytes of reordered weights pooled on huge pages (onednn_huge_pages.cc); 0 where none.
  size_t huge_page_bytes() const { return huge_page_bytes_; }
  // Each primitive's kind and oneDNN's name of its implementation, in step order
  // ("convolution:brgconv:avx512_core", "reorder:jit:uni", ...: what ONEDNN_VERBOSE shows), and
  // host steps by name ("host:concat", "host:silu", "host:gelu_erf").
  std::vector<std::string> implementations() const;
  // The dims of each primitive step's dst, in the order of implementations() (host steps: none).
  std::vector<Dims> dst_dims() const;
  // The values an int8 function keeps in u8 between its int8 convolutions (onednn_int8_chain.h),
  // by name, ascending; empty for other precisions.
  std::vector<std::string> u8_values() const;

 private:
  void run_steps(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs);

  // --- building (onednn_program.cc) ---
  void build();
  // Moves the buffers of values computed inside into one arena, sharing bytes between buffers
  // whose lifetimes do not meet (onednn_memory_plan.cc).
  void plan_memory();
  // The buffers cached reorders fill (reordered weights) moved into one allocation on huge pages
  // (onednn_huge_pages.cc).
  void pool_constants();
  [[noreturn]] void unsupported(const Node& node, const std::string& why) const;
  bool is_boundary(ValueId v) const;
  // The memory desc a boundary value is stored in outside: plain, or nhwc (layout_).
  memory::desc boundary_md(ValueId v) const;
  bool plain_boundary(ValueId v) const { return layout_[static_cast<size_t>(v)] == Layout::plain; }
  // The memory currently holding v (creating the plain boundary/constant memory on first use).
  memory value_mem(ValueId v);
  // v in plain row-major layout with its own dims (a reorder step, once, when it is blocked).
  memory plain_base(ValueId v);
  // v's plain bytes seen through `md` (same size): other dims, or strides (a transpose).
  memory view_mem(ValueId v, const memory::desc& md);
  memory plain_mem(ValueId v, const Dims& dims) { return view_mem(v, plain_md(dims, dnnl_type(fn_.value(v).type.dtype))); }
  memory plain_mem(ValueId v) { return plain_base(v); }
  // Weights v (bytes seen through user_md) in the primitive's layout md: a cached reorder for
  // inputs, done at compile time for constants, a reorder step for intermediates.
  memory weights_mem(ValueId v, const memory::desc& user_md, const memory::desc& md);
  // v in layout md (same dims): the value's memory, or its copy in md, made by a reorder step the
  // first time it is asked for (a DenseNet feature concatenated by every later layer of its block
  // is reordered once, not once per Concat).
  memory as_layout(ValueId v, const memory::desc& md);
  // Where a primitive with dst layout `md` writes value v; boundary outputs in another layout go
  // through a final reorder.
  memory dst_mem(ValueId v, const memory::desc& md);
  memory new_mem(const memory::desc& md);
  // The source operand of a conv/matmul as the primitive reads it: v seen through the f32
  // `user_md`, converted by a reorder step (every run) when the primitive wants another type.
  memory compute_src(ValueId v, const memory::desc& user_md, const memory::desc& want);
  // The data type of conv/matmul sources and weights.
  memory::data_type compute_type() const;
  Dims dims_of(ValueId v) const;
  void add_reorder(const memory& from, const memory& to);

  // Post-op chain after an anchor whose result is `value`; `try_pd(attr)` tells whether the anchor
  // accepts the attribute. Marks absorbed nodes and returns the value the chain ends with; when a
  // residual Add became a `sum` post-op, `sum_source` is the residual (the dst must hold it first).
  template <typename TryPd>
  ValueId fuse_chain(size_t anchor, ValueId value, ValueId& sum_source, dnnl::primitive_attr& attr, std::vector<std::pair<int, memory>>& binary_args,
                     TryPd&& try_pd);
  // fuse_chain for an anchor whose bare primitive descriptor is `pd`, with implementation
  // `bare_impl`: a post-op is fused only where oneDNN keeps that implementation, and `pd` becomes
  // the fused descriptor (finish_anchor says why).
  template <typename MakePd, typename Pd>
  ValueId fuse_keeping_impl(size_t anchor, ValueId value, ValueId& sum_source, dnnl::primitive_attr& attr,
                            std::vector<std::pair<int, memory>>& binary_args, MakePd& make_pd, std::optional<Pd>& pd,
                            const std::string& bare_impl);

  // --- one builder per op family (onednn_ops.cc) ---
  void build_conv(size_t n, bool transposed);
  ConvOperands conv_operands(size_t n, bool transposed);
  // The algorithms and layouts a forward conv tries, best first (the fallback, direct with format
  // any, is conv_pd's caller's last resort).
  std::vector<ConvTry> conv_tries(size_t n, const ConvOperands& c);
  dnnl::convolution_forward::primitive_desc conv_pd(const ConvOperands& c, const ConvTry& t, const dnnl::primitive_attr& a) const;
  void build_forward_conv(size_t n, const ConvOperands& c);
  void build_deconv(size_t n, const ConvOperands& c);
  // A pointwise conv over nhwc as one matmul of pixel rows (onednn_pointwise.cc): its rows
  // N*H*W when the conv is pointwise (1x1, stride 1, no padding, f32) over a dense nhwc source
  // with an address; whether it runs so (at most kPointwiseMatmulRows rows); the builder.
  static constexpr int64_t kPointwiseMatmulRows = 64;
  std::optional<int64_t> pointwise_rows(const ConvOperands& c) const;
  bool pointwise_as_matmul(const ConvOperands& c) const;
  void build_pointwise_matmul(size_t n, const ConvOperands& c);
  std::unordered_map<int, memory> conv_args(const ConvOperands& c, const memory::desc& src, const memory::desc& weights);
  // Where channel blocks start (onednn_blocks.cc).
  // Whether channel blocks started at depthwise conv n would last: every path from its output,
  // through convs, pooling and elementwise ops (which keep blocks), reaches the next depthwise
  // conv or a global pooling before any other op or the function's end.
  bool blocks_would_last(size_t n) const;
  // Whether node n is a depthwise conv that starts channel blocks (blocks_would_last).
  bool starts_blocks(size_t n) const;
  // Whether every path from conv n's output, through elementwise ops only, reaches a depthwise
  // conv that starts channel blocks: conv n then writes them.
  bool feeds_block_start(size_t n) const;
  // Whether anchor n's sum post-op may accumulate into the residual's own buffer instead of a copy
  // of it (onednn_program.cc): see there.
  bool residual_in_place(size_t n, ValueId residual, ValueId out, const memory::desc& dst) const;
  // Whether node n is a grouped 2-D conv that is not depthwise (1 < groups < channels): it keeps
  // an nhwc source's layout instead of its group width's blocks.
  bool grouped_nhwc(size_t n) const;
  void build_matmul(size_t n);
  void build_pool(size_t n);
  // BatchNormalization: a depthwise 1x1 conv over channel blocks or nhwc (build_batchnorm_as_conv,
  // false where it does not apply), else oneDNN's batch normalization (onednn_batchnorm.cc).
  void build_batchnorm(size_t n);
  bool build_batchnorm_as_conv(size_t n);
  void build_eltwise(size_t n, const std::vector<EltwiseOp>& ops);
  void build_binary(size_t n, dnnl::algorithm alg);
  void build_softmax(size_t n, bool log);
  // The softmax primitive among steps from `first` on, over the last axis of dense plain rows with
  // no post-op, replaced by the host pass (onednn_host_softmax.h) where it is compiled in.
  void host_softmax_step(size_t first);
  void build_layernorm(size_t n);
  void build_resize(size_t n);   // linear, half-pixel: the resampling primitive (onednn_resize.cc)
  // Squeeze-and-excitation scales folded into the next conv's weights (onednn_scale_fold.cc):
  // the Mul nodes absorbed, the convs that read their source instead; the weights W * s made
  // by a step each run.
  void find_scale_folds();
  memory scaled_weights(const ConvOperands& c, const memory::desc& want);
  // Decomposed groups (onednn_patterns.h), built as one primitive (onednn_ops_fused.cc).
  void find_groups();
  void build_layer_norm_group(size_t n, const LayerNormMatch& m);
  void build_unary_group(size_t n, const UnaryMatch& m);
  void absorb(const std::vector<NodeId>& nodes);
  // Quantized groups as one int8 convolution or matmul, QuantizeLinear / DequantizeLinear alone
  // as reorders with scales and zero points (onednn_int8.cc).
  void find_int8();
  void build_int8(size_t n, const Int8Match& m);
  void build_qadd(size_t n, const QAddMatch& m);
  void build_quantize(size_t n);
  void build_cast(size_t n);
  void build_dynamic_quantize(size_t n);   // a host pass, ref's arithmetic
  // Precision::int8: a Conv / MatMul / Gemm as a u8 x s8 primitive with an f32 result, or false
  // (nothing built) where it does not qualify (onednn_int8_variant.cc). `probe_only`: only whether
  // it qualifies, nothing built.
  bool build_conv_int8(size_t n, bool probe_only = false);
  bool build_matmul_int8(size_t n);
  // u8 values between int8 convolutions (onednn_int8_chain.h): which convs build in int8
  // (int8_conv_), the value conv n's post-op chain is expected to end with, whether a value is
  // kept in u8, a conv's u8 source (the kept value, or f32 quantized), value_mem's f32 copy of a
  // kept value, and the finishing of a conv whose chain ends in a kept value.
  void find_int8_convs();
  ValueId predicted_chain_end(size_t n, ValueId* residual = nullptr) const;
  bool keeps_u8(ValueId v) const;
  memory int8_source(ValueId x, const memory::desc& want, float scale, int32_t zero_point);
  // The bias b (kNoValue: none) less `shift`, divided by `scales` (the weight step's, `written`
  // counting its writes): the accumulator-unit bias, a host step that recomputes it only when an
  // input to it changed.
  memory add_accumulator_bias(ValueId b, const std::optional<memory>& shift, const memory& scales,
                              std::shared_ptr<const uint64_t> written, int64_t channels, const memory::desc& md);
  memory shared_quantize(ValueId x, const memory& from, const memory::desc& want, float scale, int32_t zero_point);
  memory dequantized(ValueId v);
  void add_dequantize(ValueId v, const memory& to);   // kept v's real values into `to` (f32), a reorder step
  bool u8_in_place(size_t n, ValueId residual, const memory::desc& dst) const;
  template <typename MakePd, typename Wire>
  void finish_int8_conv(size_t n, dnnl::primitive_attr attr, memory::data_type& dst_type, MakePd&& make_pd, Wire&& wire, ValueId end);
  bool build_act_matmul_int8(size_t n);   // both operands computed and ranged (onednn_int8_act_matmul.cc)
  // The int8 conv at steps_[step], whose first post-op multiplies by `scales` (channels floats the
  // weight step writes; `written` counts its writes), rebuilt with them as output scales, a host
  // step before it creating it again after each write; left as it is where oneDNN would change
  // kernel or layouts (onednn_int8_oscale.cc).
  void settle_output_scales(size_t step, const memory& scales, int64_t channels, std::shared_ptr<const uint64_t> written);
  // y's int8 bias shift (Value::int8_bias_shift) as a constant post-op operand of dims
  // `per_channel`, or nullopt where y has none; KernelError when its length is not `channels`.
  std::optional<memory> bias_shift(ValueId y, const Dims& per_channel, int64_t channels);
  // `from` (f32) quantized to u8 in layout `want` by a reorder step: round(x / scale) + zero_point.
  memory quantize_source(const memory& from, const memory::desc& want, float scale, int32_t zero_point);
  // A host step that quantizes weights w per channel into `weights` (layout `want`, through
  // s8 bytes `user_s8`) and writes act_scale * sw[c] into `scales`, redone when w's pointer changes
  // and on every run where w varies (BoundaryLayouts::varying_inputs).
  // Returns how many times it has written them (0 before the first run).
  std::shared_ptr<const uint64_t> add_weight_quantizer(ValueId w, const memory::desc& user_s8, const memory::desc& want, const memory& scales,
                            int64_t channels, int64_t per_channel, int64_t channel_stride, int64_t elem_stride,
                            float act_scale, memory& weights);
  // The layout an elementwise conversion of x into type t writes: x's own when it has no blocks,
  // else plain; `src` is set to the memory to read x from.
  memory::desc elementwise_dst(ValueId x, memory::data_type t, memory& src);
  // ConvInteger / MatMulInteger, exact int32 results (onednn_integer.cc).
  void build_integer(size_t n);
  // Reshape-like views, Transpose, Concat (onednn_ops_layout.cc).
  static bool is_layout_op(const std::string& op);
  void build_layout_op(size_t n);
  void build_reshape(size_t n);
  void build_transpose(size_t n);
  void build_concat(size_t n);
  void build_slice(size_t n);
  void build_split(size_t n);
  // Concats written in place (onednn_concat_regions.cc): a channel Concat of one image, its
  // non-empty inputs; the regions planned before building; a value's slab through `md` where it
  // has one and `md` is plain or whole channel blocks; a Concat output's memory (its region's
  // when every input already there is at its own slab, read as it is).
  std::optional<std::vector<ValueId>> channel_concat_inputs(size_t n) const;
  void plan_concat_regions();
  std::optional<memory> region_mem(ValueId v, const memory::desc& md);
  memory concat_dst(ValueId y, const memory::desc& md, const std::vector<ValueId>& ins,
                    const std::vector<std::pair<memory, size_t>>& srcs);
  // v's bytes seen through `md` (no copy); bound at each run when v is a boundary value.
  memory over_storage(ValueId v, const memory::desc& md);
  // The strides v is stored with when its layout has no blocks and is not plain (nhwc, a strided
  // view); none for plain and blocked values.
  std::optional<Dims> own_strides(ValueId v);
  // v (nhwc or another layout without blocks, not plain) seen with `dims` without a copy, when
  // reshape_strides allows it.
  std::optional<memory> strided_view(ValueId v, const Dims& dims);
  // y = the window of x at `offsets` with y's dims, copied by one reorder from a view of x's own
  // memory into y in x's layout family (plain, nhwc, channel blocks).
  void copy_window(ValueId x, ValueId y, const Dims& offsets);
  // y, x's window at `offsets`, as a view of x's bytes when only layout ops read it: a
  // Transpose, directly or through one shape-only op (onednn_operand_views.cc).
  bool window_view(ValueId x, ValueId y, const Dims& offsets);
  // The layout a Transpose writes y ([..., M, K] read through `ystrides`) in when its one reader
  // is a MatMul taking it as B and the source's innermost dim lands second-last: the last two
  // dims swapped, so the copy keeps the source's runs (onednn_operand_views.cc).
  std::optional<memory::desc> b_operand_layout(ValueId y, const Dims& yd, const Dims& ystrides) const;
  // Whether b is stored in that swapped layout with dims `bd` (so a MatMul reads it as is).
  bool stored_swapped(ValueId b, const Dims& bd) const;
  // Slice node n's window start in its input (steps of 1; constant starts, axes).
  Dims slice_offsets(size_t n);
  // Channel shuffles after a Concat as one host step (onednn_shuffle.cc).
  std::optional<ShuffleMatch> match_shuffle(size_t n) const;
  void find_shuffles();
  void build_shuffle(size_t n, const ShuffleMatch& m);
  // Finishes an anchor: fuses its chain, creates the primitive, wires src args and the dst.
  // make_pd(attr) creates the primitive descriptor (throws dnnl::error when oneDNN declines);
  // wire(pd) returns the source/weights arguments; `attr` may carry initial post-ops. `out` is
  // the value the anchor computes (default: node n's output; a group's last value).
  // `kept_as`: the layout the value is kept in when the primitive's dst desc shows the same bytes
  // with other dims (a pointwise conv as a matmul, onednn_pointwise.cc).
  template <typename MakePd, typename Wire>
  void finish_anchor(size_t n, dnnl::primitive_attr attr, MakePd&& make_pd, Wire&& wire, ValueId out = kNoValue,
                     const std::optional<memory::desc>& kept_as = std::nullopt);

 public:
  // Eltwise algorithms for an op, or nullopt when the op is not eltwise (onednn_eltwise.cc). A
  // binary op with a constant scalar operand is one (alpha * x + beta); eltwise_source is the
  // operand an eltwise op reads.
  static std::optional<std::vector<EltwiseOp>> eltwise_ops(const Graph& fn, const Node& node);
  static ValueId eltwise_source(const Graph& fn, const Node& node);
  static std::optional<dnnl::algorithm> binary_alg(const std::string& op);

 private:
  const Graph& fn_;
  Precision precision_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  FunctionFrame frame_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<std::optional<memory>> mem_;                // by ValueId: where the value lives
  std::unordered_map<ValueId, bool> window_views_;        // windows seen in place, and Reshapes of them (window_view)
  std::vector<std::optional<memory>> plain_of_;           // by ValueId: its plain copy, when mem_ is not plain
  std::vector<std::vector<memory>> converted_;            // by ValueId: its copies in other layouts (as_layout)
  std::vector<Layout> layout_;                            // by ValueId: boundary layout (plain inside)
  std::vector<char> varying_;                             // by ValueId: an input whose contents change between runs
  std::vector<ValueId> alias_of_;                         // by ValueId: the boundary value a view shows
  std::vector<char> absorbed_;                            // by node: fused into an earlier anchor
  std::unordered_map<size_t, ShuffleMatch> shuffle_at_;      // by the Concat
  std::unordered_map<size_t, LayerNormMatch> layer_norm_at_;   // by the group's first node
  std::unordered_map<size_t, UnaryMatch> unary_at_;            // GELU, SiLU: by the group's first node
  std::unordered_map<ValueId, UnaryMatch> unary_of_;           // by the group's input value
  std::unordered_map<size_t, Int8Match> int8_at_;              // quantized groups, by anchor node
  std::unordered_map<size_t, QAddMatch> qadd_at_;              // quantized residual sums, by Add node
  struct U8Value {   // a value kept in u8: real = scale * (q - zero_point)
    memory mem;
    float scale = 1.0f;
    int32_t zero_point = 0;
  };
  std::unordered_map<ValueId, U8Value> u8_of_;                 // values kept in u8 (onednn_int8_chain.h)
  struct QuantizedSource {   // an f32 value (seen as `from`) quantized at its range
    memory::desc from;
    memory to;
  };
  std::unordered_map<ValueId, QuantizedSource> quantized_src_;   // shared by the value's int8 readers
  std::vector<char> int8_conv_;                                // by node: a Conv built in int8
  struct ScaleFold {
    ValueId source, scale;
  };
  std::unordered_map<size_t, ScaleFold> scale_fold_;           // by conv node
  struct Region {
    ValueId root = kNoValue;   // the Concat output whose buffer holds it
    size_t offset = 0;         // bytes into that buffer
  };
  std::vector<Region> region_of_;                         // by ValueId: its slab in a Concat's buffer
  std::unordered_map<ValueId, memory> region_base_;       // by root: the buffer, made on first use
  std::unordered_map<ValueId, size_t> region_bytes_;      // by root: its size
  std::vector<std::pair<memory, ValueId>> bindings_;      // boundary memories, handle set per run
  std::vector<CachedReorder> cached_;
  std::vector<Step> steps_, final_reorders_;
  size_t anchor_step_ = 0;                                // the last anchor primitive finish_anchor / finish_int8_conv pushed
  size_t owned_bytes_ = 0;
  std::vector<memory> owned_;                             // every buffer new_mem made
  struct FreeBytes {
    void operator()(std::byte* p) const { std::free(p); }
  };
  static constexpr size_t kArenaAlign = 64;
  // `bytes` aligned to 64, or from 2 MiB on aligned to 2 MiB, rounded up to it and advised
  // MADV_HUGEPAGE (*advised: whether the kernel took the advice) (onednn_huge_pages.cc).
  static std::unique_ptr<std::byte, FreeBytes> huge_bytes(size_t bytes, bool* advised = nullptr);
  std::unique_ptr<std::byte, FreeBytes> arena_;          // the planned buffers (plan_memory)
  std::vector<std::unique_ptr<std::byte, FreeBytes>> pools_;   // reordered weights (pool_constants)
  size_t huge_page_bytes_ = 0;
  bool computes_in_bf16_ = false;                         // some conv/matmul reads bf16
  bool computes_in_int8_ = false;                         // some conv/matmul runs u8 x s8
  bool moves_only_ = false;                               // layout ops only: run on one OpenMP thread
  // While an anchor computes its rank-R value as a GEMM of rank 2 (a MatMul against constant
  // weights, build_matmul), 2: fuse_chain gives its post-op operands rank 2 as well, their leading
  // dims folded into rows. 0: the chain's own rank.
  size_t post_op_rank_ = 0;
};

}  // namespace tessera::onednn
