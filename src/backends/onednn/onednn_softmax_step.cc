// OnednnProgram: a Softmax over the last axis as the host pass (onednn_host_softmax.h).
//
// build_softmax builds the primitive as before (finish_anchor: layouts, the dst, any post-op
// oneDNN takes); then, where the step it made is a softmax with no post-op over dense plain rows,
// the step is swapped for the host pass over the same memories. The pass reads the memories'
// addresses when it runs, so bound boundary values and arena moves (plan_memory) reach it.
#include "backends/onednn/onednn_host_softmax.h"
#include "backends/onednn/onednn_program.h"

namespace tessera::onednn {
namespace {

bool dense_plain(const memory::desc& md) {
  return md.data_type() == memory::data_type::f32 && md == plain_md(md.dims());
}

}  // namespace

void OnednnProgram::host_softmax_step(size_t first) {
  if (!host_softmax_available() || precision_ != Precision::f32) return;
  for (size_t i = first; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    if (step.host || step.prim.get_kind() != dnnl::primitive::kind::softmax) continue;
    const_dnnl_primitive_attr_t attr = nullptr;
    const_dnnl_post_ops_t po = nullptr;
    if (dnnl_primitive_desc_get_attr(step.prim.get_primitive_desc(), &attr) != dnnl_success ||
        dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success || dnnl_post_ops_len(po) != 0)
      return;
    const auto src = step.args.find(DNNL_ARG_SRC), dst = step.args.find(DNNL_ARG_DST);
    if (src == step.args.end() || dst == step.args.end()) return;
    const memory x = src->second, y = dst->second;
    if (!dense_plain(x.get_desc()) || !(y.get_desc() == x.get_desc())) return;
    const Dims dims = x.get_desc().dims();
    const int64_t n = dims.back();
    int64_t rows = 1;
    for (size_t k = 0; k + 1 < dims.size(); ++k) rows *= dims[k];
    if (n <= 0 || rows <= 0) return;
    step = Step{{}, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}},
                [x, y, rows, n] {
                  softmax_rows(static_cast<const float*>(x.get_data_handle()), static_cast<float*>(y.get_data_handle()), rows, n);
                },
                "host:softmax"};
    return;
  }
}

}  // namespace tessera::onednn
