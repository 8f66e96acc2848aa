// An int8 convolution's per-channel scales as oneDNN output scales, settled on the first run
// (OnednnProgram::settle_output_scales; the convolutions of onednn_int8_variant.cc).
//
// Why. An int8 conv's result is (acc + Bacc[o]) * sx * sw[o], and sw[o] depends on the weights,
// a function input with no values at compile time. oneDNN 2.x takes a matmul's output scales at
// run time but a convolution's only when its primitive is created, so the conv is built with the
// scale as its first post-op, binary_mul reading a per-channel f32 tensor the weight step writes.
// oneDNN's kernels apply that as one more memory operand per output vector: mobilenet_v2's
// 16 -> 96 1x1 conv at 112x112 ran 0.189 ms with it against 0.123 ms with the same scales as
// output scales, its depthwise convs 1.2-1.3x, resnet18's 3x3 convs 1.01-1.06x (one conv alone,
// 1 thread, oneDNN 2.6).
//
// What. Once the conv is built, its primitive is created again with output scales (mask: per
// output channel, placeholder values) in place of the binary_mul. Where oneDNN keeps its kernel
// (or picks another of its VNNI int8 ones) and the same source, weights and destination layouts
// (the weight step's reorder and the neighbours' buffers depend on them), that primitive replaces
// the step's, the binary_mul's operand leaves its arguments and the later post-ops' operands move
// down one index. A host step just before the conv creates it again with the scales' values
// whenever the weight step has written them since (on the first run, when the weights' pointer
// changes, and on every run where they vary; one counter read per run otherwise). Elsewhere the
// conv keeps its binary_mul.
//
// Numbers. oneDNN 2.x computes an int8 conv as oscale * (acc + bias), the order the binary_mul
// had (bias in accumulator units, then the scale, then the rest of the chain): mobilenet_v2's
// outputs are the same bit for bit either way.
#include <memory>
#include <string>
#include <vector>

#include "backends/onednn/onednn_anchor.h"
#include "backends/onednn/onednn_int8_chain.h"

namespace tessera::onednn {

namespace {

constexpr int kPostOpBase = DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE;

// A C primitive descriptor, destroyed with its owner.
struct CPd {
  dnnl_primitive_desc_t pd = nullptr;
  CPd() = default;
  CPd(const CPd&) = delete;
  CPd& operator=(const CPd&) = delete;
  ~CPd() {
    if (pd) dnnl_primitive_desc_destroy(pd);
  }
};

std::string impl_of(const_dnnl_primitive_desc_t pd) {
  const char* info = nullptr;
  return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &info) == dnnl_success && info ? info : "";
}

bool same_md(const_dnnl_primitive_desc_t a, const_dnnl_primitive_desc_t b, dnnl_query_t what) {
  const dnnl_memory_desc_t* ma = dnnl_primitive_desc_query_md(a, what, 0);
  const dnnl_memory_desc_t* mb = dnnl_primitive_desc_query_md(b, what, 0);
  return ma && mb && dnnl_memory_desc_equal(ma, mb);
}

bool same_layouts(const_dnnl_primitive_desc_t a, const_dnnl_primitive_desc_t b) {
  return same_md(a, b, dnnl_query_src_md) && same_md(a, b, dnnl_query_weights_md) && same_md(a, b, dnnl_query_dst_md);
}

// The conv `prim`'s descriptor and attributes, its post-ops from index `first` on (1: without
// the binary_mul) and per-output-channel output scales `scales`, in `out`; out.pd stays null
// where oneDNN declines it.
void create_rescaled(const dnnl::primitive& prim, int first, const std::vector<float>& scales, CPd& out) {
  const_dnnl_primitive_desc_t pd = prim.get_primitive_desc();
  const_dnnl_op_desc_t op = nullptr;
  const_dnnl_primitive_attr_t attr = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_convolution_d, 0, &op) != dnnl_success || !op) return;
  if (dnnl_primitive_desc_get_attr(pd, &attr) != dnnl_success) return;
  dnnl_primitive_attr_t cloned = nullptr;
  if (dnnl_primitive_attr_clone(&cloned, attr) != dnnl_success) return;
  const dnnl::primitive_attr base(cloned);   // owns `cloned`; read only
  // A fresh attribute with the clone's zero points, post-ops (deep copies: owned_post_ops) and
  // the output scales.
  dnnl::primitive_attr a;
  for (const int arg : {DNNL_ARG_SRC, DNNL_ARG_DST}) {
    int mask = 0;
    std::vector<int32_t> zero_points;
    base.get_zero_points(arg, mask, zero_points);
    if (!zero_points.empty() && !(zero_points.size() == 1 && zero_points[0] == 0)) a.set_zero_points(arg, mask, zero_points);
  }
  a.set_post_ops(owned_post_ops(base.get_post_ops(), -1, first));
  a.set_output_scales(1 << 1, scales);
  dnnl_engine_t eng = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_engine, 0, &eng) != dnnl_success) return;
  if (dnnl_primitive_desc_create(&out.pd, op, a.get(), eng, nullptr) != dnnl_success) out.pd = nullptr;
}

// `args` with the first post-op's operand gone and the later ones' one index down.
std::unordered_map<int, memory> without_first_post_op(const std::unordered_map<int, memory>& args) {
  std::unordered_map<int, memory> out;
  for (const auto& [key, m] : args) {
    if (key < kPostOpBase) {
      out.emplace(key, m);
      continue;
    }
    const int index = key / kPostOpBase - 1, arg = key % kPostOpBase;
    if (index > 0) out.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index - 1) | arg, m);
  }
  return out;
}

}  // namespace

void OnednnProgram::settle_output_scales(size_t step, const memory& scales, int64_t channels,
                                         std::shared_ptr<const uint64_t> written) {
  Step& conv = steps_[step];
  const std::vector<float> placeholder(static_cast<size_t>(channels), 1.0f);
  CPd trial;
  create_rescaled(conv.prim, 1, placeholder, trial);
  if (!trial.pd) return;
  const_dnnl_primitive_desc_t old = conv.prim.get_primitive_desc();
  const std::string impl = impl_of(trial.pd);
  if ((impl != impl_of(old) && !vnni_int8_impl(impl)) || !same_layouts(old, trial.pd)) return;
  conv.prim = dnnl::primitive(trial.pd);
  conv.args = without_first_post_op(conv.args);
  auto applied = std::make_shared<uint64_t>(0);   // the weight step's writes the primitive has seen
  const size_t at = step + 1;                        // the conv, once the host step is in front of it
  steps_.insert(steps_.begin() + static_cast<std::ptrdiff_t>(step),
                Step{{}, {{DNNL_ARG_SRC, scales}}, [this, at, scales, written, applied, channels] {
                       if (*written == *applied) return;
                       const float* now = static_cast<const float*>(scales.get_data_handle());
                       CPd pd;
                       create_rescaled(steps_[at].prim, 0, std::vector<float>(now, now + channels), pd);
                       if (!pd.pd || !same_layouts(steps_[at].prim.get_primitive_desc(), pd.pd))
                         throw KernelError("onednn_int8: oneDNN changed a convolution's kernel when given its output scales");
                       steps_[at].prim = dnnl::primitive(pd.pd);
                       *applied = *written;
                     },
                     "host:int8_output_scales"});
}

}  // namespace tessera::onednn
