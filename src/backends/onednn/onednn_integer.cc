// OnednnProgram: ConvInteger and MatMulInteger (int32 results) as int8 primitives, exactly.
//
//   ConvInteger(x u8|s8, w, xz, wz)   y[o] = sum over the window of (x - xz) * (w[o] - wz)
//
// oneDNN 2.x takes s8 weights without a zero point; ONNX Runtime's dynamic quantization writes u8
// weights with one (ISNet: zero points 101..150). Every weight is split exactly into an s8 part
// and a constant, w - wz = w' + c with w' = w - 128, c = 128 - wz for u8 weights (w' = w, c = -wz
// for s8), so
//
//   y[o] = conv(x - xz, w')[o] + c * conv(x - xz, ones)[group of o]
//
// The first term is one int8 convolution with the source zero point as oneDNN's attribute (padding
// stands for xz, as ONNX's integer convolution pads); the second is a one-output-channel-per-group
// convolution with all-one weights (the window sums), added by a host pass over the int32 result,
// both in channels-last order; a Cast to f32 after it is the same pass's output (or the primitive's
// f32 result where there is no second term). Where c is 0 (s8 weights, wz = 0) neither the second convolution nor
// the pass runs. MatMulInteger is the same with the window being the row: y = (a - az) b' + c *
// rowsum(a - az). A source zero point that is not a constant (DynamicQuantizeLinear's output) is
// passed at run time (DNNL_RUNTIME_S32_VAL). Every sum is an int32, exact like ref's.
//
// Refused (KernelUnsupported, the node runs elsewhere): weights that are not constants, weight
// zero points that are not one constant, a source zero point per axis, MatMulInteger whose B has
// more than 2 dims.
#include <cstring>

#include "backends/onednn/onednn_anchor.h"
#include "backends/onednn/onednn_host_quant.h"

namespace tessera::onednn {
namespace {

using dt = memory::data_type;

// The channels-last tag of a rank-3..5 activation.
tag channels_last(size_t rank) { return rank == 3 ? tag::nwc : rank == 4 ? tag::nhwc : tag::ndhwc; }

std::vector<int32_t> constant_ints(const Graph& fn, ValueId v) {
  const Value& val = fn.value(v);
  std::vector<int32_t> out(static_cast<size_t>(val.type.numel()));
  const uint8_t* p = val.data->data();
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = val.type.dtype == DType::u8 ? p[i] : static_cast<int8_t>(p[i]);
  return out;
}

}  // namespace

void OnednnProgram::build_integer(size_t n) {
  const Node& node = fn_.nodes[n];
  const bool conv = node.op == "ConvInteger";
  const ValueId x = node.inputs[0], w = node.inputs[1], y = node.outputs[0];
  const ValueId xz = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  const ValueId wz = node.inputs.size() > 3 ? node.inputs[3] : kNoValue;
  const Value &xv = fn_.value(x), &wv = fn_.value(w);
  if (xv.type.dtype != DType::u8 && xv.type.dtype != DType::i8) unsupported(node, "a source that is not uint8 or int8");
  if (!wv.is_constant() || !wv.data || (wv.type.dtype != DType::u8 && wv.type.dtype != DType::i8))
    unsupported(node, "weights that are not a uint8 or int8 constant");
  if (fn_.value(y).type.dtype != DType::i32) unsupported(node, "a result that is not int32");
  // The weights' constant part c (above).
  int32_t c = wv.type.dtype == DType::u8 ? 128 : 0;
  if (wz != kNoValue) {
    const Value& z = fn_.value(wz);
    if (!z.is_constant() || !z.data) unsupported(node, "a weight zero point that is not a constant");
    const std::vector<int32_t> zs = constant_ints(fn_, wz);
    for (int32_t v : zs)
      if (v != zs[0]) unsupported(node, "weight zero points per channel that differ");
    if (!zs.empty()) c -= zs[0];
  }
  if (xz != kNoValue && fn_.value(xz).type.numel() != 1) unsupported(node, "a source zero point per axis");
  std::vector<int8_t> w8(static_cast<size_t>(wv.type.numel()));
  {
    const uint8_t* p = wv.data->data();
    for (size_t i = 0; i < w8.size(); ++i) w8[i] = static_cast<int8_t>(wv.type.dtype == DType::u8 ? p[i] - 128 : static_cast<int8_t>(p[i]));
  }

  // The source zero point: a constant folded into the primitive, or an int32 copied in each run.
  dnnl::primitive_attr attr;
  std::optional<memory> zp_mem;
  if (xz != kNoValue) {
    const Value& z = fn_.value(xz);
    if (z.is_constant() && z.data) {
      if (const int32_t v = constant_ints(fn_, xz)[0]; v != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {v});
    } else {
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      zp_mem = new_mem(plain_md({1}, dt::s32));
      const memory to = *zp_mem, from = value_mem(xz);   // an input (bound per run) or an inner value
      const bool is_u8 = z.type.dtype == DType::u8;
      // Reads one element of `from`, writes `to` (every run, before the primitives read it).
      steps_.push_back({{}, {{DNNL_ARG_SRC, from}, {DNNL_ARG_DST, to}}, [to, from, is_u8] {
                          const void* p = from.get_data_handle();
                          *static_cast<int32_t*>(to.get_data_handle()) = is_u8 ? *static_cast<const uint8_t*>(p) : *static_cast<const int8_t*>(p);
                        }, "host:zero_point"});
    }
  }
  const dt xt = dnnl_type(xv.type.dtype);
  // Weights as s8, reordered once now into the primitive's layout.
  auto weights = [&](const memory::desc& user, const void* data, const memory::desc& want) {
    memory from(user, engine_, const_cast<void*>(data));
    memory to = new_mem(want);
    dnnl::reorder(from, to).execute(stream_, from, to);
    stream_.wait();
    return to;
  };
  auto add_step = [&](dnnl::primitive prim, std::unordered_map<int, memory> args) {
    if (zp_mem) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = *zp_mem;
    steps_.push_back({std::move(prim), std::move(args), {}});
  };

  // A Cast to f32 that is y's only reader is taken in (ONNX Runtime's units cast every result):
  // the result is written as f32 directly, by the primitive or by the pass that adds the weight
  // zero point's term. int32 -> f32 rounds to nearest even, as ref's Cast.
  ValueId out = y;
  if (const auto& readers = consumers_[static_cast<size_t>(y)]; !frame_.is_function_output(y) && readers.size() == 1) {
    const Node& cast = fn_.node(readers[0]);
    if (cast.op == "Cast" && fn_.value(cast.outputs[0]).type.dtype == DType::f32) {
      absorbed_[static_cast<size_t>(readers[0])] = 1;
      out = cast.outputs[0];
    }
  }
  const dt out_t = out == y ? dt::s32 : dt::f32;
  // The term c * sums added to the int32 products `acc` (column p * cols + j reads sums[p * groups
  // + j / per_group]), in place, or written to `to` as f32.
  auto add_term = [&](const memory& acc, const memory& sums, const std::optional<memory>& to, int64_t rows, int64_t cols, int64_t groups) {
    // Handles read when the pass runs: a function output's memory is bound per run.
    // For the memory plan: reads acc and sums, writes all of `to`, or acc in place.
    std::unordered_map<int, memory> uses{{DNNL_ARG_SRC_1, sums}};
    if (to) {
      uses[DNNL_ARG_SRC_0] = acc;
      uses[DNNL_ARG_DST] = *to;
    } else {
      uses[DNNL_ARG_DST] = acc;
    }
    steps_.push_back({{}, std::move(uses), [acc, sums, to, rows, cols, groups, c] {
                        onednn::add_term(static_cast<int32_t*>(acc.get_data_handle()), static_cast<const int32_t*>(sums.get_data_handle()),
                                         to ? static_cast<float*>(to->get_data_handle()) : nullptr, rows, cols, groups, c);
                      }, "host:weight_zero_point"});
  };

  try {
    if (conv) {
      const Shape &xs = xv.type.shape, &ws = wv.type.shape, &ys = fn_.value(y).type.shape;
      if (xs.size() < 3 || xs.size() > 5) unsupported(node, "only 1-D, 2-D and 3-D convolutions");
      const ConvGeometry geo = conv_geometry(node, xs, ws, ys, false);
      const int64_t g = geo.groups, O = ys[1];
      const Dims xd(xs.begin(), xs.end()), yd(ys.begin(), ys.end());
      const tag last = channels_last(xs.size());
      auto make = [&](const Dims& wdims, const Dims& dst_dims, dt t) {
        dnnl::convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, any_md(xd, xt),
                                          any_md(wdims, dt::s8), memory::desc(dst_dims, t, last), geo.st, geo.dl, geo.pl, geo.pr);
        return dnnl::convolution_forward::primitive_desc(d, attr, engine_);
      };
      // Straight into the result where no term follows or the result is int32 anyway.
      const bool direct = c == 0 || out == y;
      const auto pd = make(geo.wdims, yd, direct ? out_t : dt::s32);
      const memory src = as_layout(x, pd.src_desc());
      const memory dst = direct ? dst_mem(out, pd.dst_desc()) : new_mem(pd.dst_desc());
      add_step(dnnl::convolution_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights(memory::desc(geo.wdims, dt::s8, geo.wstrides), w8.data(), pd.weights_desc())},
                                               {DNNL_ARG_DST, dst}});
      if (c != 0) {
        // Window sums of x - xz per group: g output channels, all-one weights [g][1][C/g][k].
        Dims ones_dims = geo.wdims;
        if (g > 1) ones_dims[1] = 1;
        else ones_dims[0] = 1;
        Dims sums_dims = yd;
        sums_dims[1] = g;
        const auto spd = make(ones_dims, sums_dims, dt::s32);
        int64_t count = 1;
        for (int64_t d : ones_dims) count *= d;
        const std::vector<int8_t> ones(static_cast<size_t>(count), 1);
        const memory sums = new_mem(spd.dst_desc());
        add_step(dnnl::convolution_forward(spd), {{DNNL_ARG_SRC, as_layout(x, spd.src_desc())},
                                                  {DNNL_ARG_WEIGHTS, weights(plain_md(ones_dims, dt::s8), ones.data(), spd.weights_desc())},
                                                  {DNNL_ARG_DST, sums}});
        int64_t positions = 1;   // batch times spatial
        for (size_t i = 0; i < yd.size(); ++i) positions *= i == 1 ? 1 : yd[i];
        std::optional<memory> to;
        if (!direct) to = dst_mem(out, memory::desc(yd, dt::f32, last));
        add_term(dst, sums, to, positions, O, g);
      }
    } else {
      const Shape &as = xv.type.shape, &bs = wv.type.shape;
      if (as.size() < 2 || bs.size() != 2) unsupported(node, "a product whose A has fewer than 2 dims or B other than 2");
      const int64_t K = bs[0], N = bs[1], M = xv.type.numel() / K;
      const memory::desc a_md = plain_md({M, K}, xt);
      auto make = [&](int64_t cols, dt t) {
        dnnl::matmul::desc d(a_md, any_md({K, cols}, dt::s8), plain_md({M, cols}, t));
        return dnnl::matmul::primitive_desc(d, attr, engine_);
      };
      const bool direct = c == 0 || out == y;
      const auto pd = make(N, direct ? out_t : dt::s32);
      const memory a = plain_mem(x, {M, K});
      const memory dst = direct ? dst_mem(out, pd.dst_desc()) : new_mem(pd.dst_desc());
      add_step(dnnl::matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, weights(plain_md({K, N}, dt::s8), w8.data(), pd.weights_desc())},
                                  {DNNL_ARG_DST, dst}});
      if (c != 0) {
        const auto spd = make(1, dt::s32);
        const std::vector<int8_t> ones(static_cast<size_t>(K), 1);
        const memory sums = new_mem(spd.dst_desc());
        add_step(dnnl::matmul(spd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, weights(plain_md({K, 1}, dt::s8), ones.data(), spd.weights_desc())},
                                     {DNNL_ARG_DST, sums}});
        std::optional<memory> to;
        if (!direct) to = dst_mem(out, plain_md({M, N}));
        add_term(dst, sums, to, M, N, 1);
      }
    }
  } catch (const dnnl::error& e) {
    unsupported(node, std::string("oneDNN declines the int8 primitive: ") + e.what());
  }
}

}  // namespace tessera::onednn
