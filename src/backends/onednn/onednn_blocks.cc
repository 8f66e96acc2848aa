// Where channel blocks start in a oneDNN function (AVX-512 CPUs): the policy build_conv follows.
//
// Terms. *Blocks*: aBcd16b, channels in groups of 16 innermost, the layout of oneDNN's jit_dw
// (depthwise) and jit_1x1/jit (dense) kernels. A conv whose source is blocked keeps the blocks
// (onednn_ops.cc); so does everything elementwise. What remains is where to enter them:
//
//   stem conv ─▶ Clip ─▶ dw conv ─▶ 1x1 ─▶ Add ─▶ 1x1 ─▶ Clip ─▶ dw conv ─▶ ... ─▶ GlobalAveragePool
//   └ writes blocks ┘     └ starts blocks: every path reaches the next dw conv or a global pool ┘
//
// - A depthwise conv starts blocks when they would last (blocks_would_last): every path from its
//   output, through convs, pooling and elementwise ops, reaches the next depthwise conv or a
//   global pooling before any other op or the function's end. jit_dw beats the nhwc brdgmm_dw
//   (efficientnet_b0's 16 depthwise convs 3.6 -> 3.0 ms), but blocks that meet a Concat with an
//   nhwc input or a channel shuffle (ShuffleNet) pay reorders and a ref concat in every unit.
// - The conv in front of such a depthwise conv, through elementwise ops and fused SiLU/HardSwish
//   groups, writes the blocks itself (feeds_block_start), when it has at least 16 output
//   channels (fewer fill half a block: PaddleOCR cls's 8-channel 1x1 ran 0.008 ms in nhwc, 0.012
//   in blocks). MobileNet's stem then runs one jit conv instead of brgconv in nhwc and a reorder.
//   Its other readers may be anything along which blocks would last as well (MobileNetV3's stem
//   also feeds the first block's residual Add): else the depthwise conv and the Add each reorder
//   the stem's nhwc output into blocks, every run.
//
// - Blocks of 8 are not kept on such a CPU (onednn_ops.cc): oneDNN's kernels for them are its
//   AVX2 ones. A grouped conv (1 < groups < channels) picks the blocks of its group width under
//   format any; between nhwc convs it reads and writes nhwc instead (grouped_nhwc), where its
//   jit kernel runs about as fast and no reorder goes in front or behind (ResNeXt).
//
// Both walks are bounded (256 and 16 values); a walk that runs out says no, which only costs
// the reorder the policy would have saved.
#include "backends/onednn/onednn_anchor.h"

namespace tessera::onednn {

namespace {

// A depthwise 2-D conv of at least 8 channels, one output channel per input channel.
bool is_depthwise(const Graph& fn, const Node& node) {
  if (node.op != "Conv") return false;
  const Shape &xs = fn.value(node.inputs[0]).type.shape, &ys = fn.value(node.outputs[0]).type.shape;
  const int64_t g = attr_int(node.attrs, "group", 1);
  return xs.size() == 4 && ys.size() == 4 && g > 1 && g == xs[1] && g == ys[1] && g >= 8;
}

}  // namespace

bool OnednnProgram::blocks_would_last(size_t n) const {
  std::vector<ValueId> todo{fn_.nodes[n].outputs[0]};
  std::vector<char> seen(fn_.nodes.size(), 0);
  for (int budget = 256; !todo.empty(); --budget) {
    const ValueId v = todo.back();
    todo.pop_back();
    if (budget == 0 || frame_.is_function_output(v)) return false;
    for (NodeId c : consumers_[static_cast<size_t>(v)]) {
      if (seen[static_cast<size_t>(c)]) continue;
      seen[static_cast<size_t>(c)] = 1;
      const Node& node = fn_.node(c);
      if (is_depthwise(fn_, node) || node.op == "GlobalAveragePool" || node.op == "GlobalMaxPool") continue;
      const bool keeps = node.op == "Conv" || node.op == "MaxPool" || node.op == "AveragePool" ||
                         node.op == "BatchNormalization" || binary_alg(node.op) || eltwise_ops(fn_, node);
      if (!keeps) return false;
      for (ValueId o : node.outputs) todo.push_back(o);
    }
  }
  return true;
}

bool OnednnProgram::grouped_nhwc(size_t n) const {
  const Node& node = fn_.nodes[n];
  if (node.op != "Conv") return false;
  const Shape &xs = fn_.value(node.inputs[0]).type.shape, &ys = fn_.value(node.outputs[0]).type.shape;
  const int64_t g = attr_int(node.attrs, "group", 1);
  return xs.size() == 4 && ys.size() == 4 && g > 1 && !(g == xs[1] && g == ys[1]);
}

bool OnednnProgram::starts_blocks(size_t n) const { return is_depthwise(fn_, fn_.nodes[n]) && blocks_would_last(n); }

bool OnednnProgram::feeds_block_start(size_t n) const {
  const Shape& ys = fn_.value(fn_.nodes[n].outputs[0]).type.shape;
  if (ys.size() != 4 || ys[1] < 16) return false;   // fewer channels than a block: nhwc kernels run faster
  std::vector<ValueId> todo{fn_.nodes[n].outputs[0]};
  bool reached = false;   // some path reaches a depthwise conv that starts blocks
  bool other = false;     // some path leaves the elementwise ops before one
  for (int budget = 16; !todo.empty(); --budget) {
    const ValueId v = todo.back();
    todo.pop_back();
    if (budget == 0 || frame_.is_function_output(v) || consumers_[static_cast<size_t>(v)].empty()) return false;
    if (auto group = unary_of_.find(v); group != unary_of_.end()) {   // a SiLU or HardSwish post-op
      todo.push_back(group->second.out);
      continue;
    }
    for (NodeId c : consumers_[static_cast<size_t>(v)]) {
      const Node& node = fn_.node(c);
      if (starts_blocks(static_cast<size_t>(c))) {
        reached = true;
        continue;
      }
      if (is_depthwise(fn_, node)) return false;   // one whose blocks would not last (ShuffleNet's)
      if (!eltwise_ops(fn_, node) || node.outputs.size() != 1) other = true;
      else todo.push_back(node.outputs[0]);
    }
  }
  // A path that leaves them (MobileNetV3's stem also feeds its first block's residual Add) is fine
  // where the blocks would last along it as well: the Add and the convs after it keep them.
  return reached && (!other || blocks_would_last(n));
}

}  // namespace tessera::onednn
