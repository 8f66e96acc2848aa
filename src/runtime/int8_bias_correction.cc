// Per-channel bias correction of int8 anchors (int8_bias_correction.h).
#include "runtime/int8_bias_correction.h"

#include <cmath>

#include "backends/compilers/backend_compiler.h"
#include "ir/calibrated_ranges.h"
#include "partition/dataflow_index.h"
#include "partition/sub_graph.h"

namespace tessera {

namespace {

// Conv with a 4-D source, or MatMul/Gemm with constant 2-D weights, reading a ranged source.
bool corrects(const Graph& g, const Node& n) {
  if (n.op != "Conv" && n.op != "MatMul" && n.op != "Gemm") return false;
  if (n.inputs.size() < 2 || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue || n.outputs.empty()) return false;
  const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
  if (!x.range || !w.is_constant() || w.type.dtype != DType::f32) return false;
  return n.op == "Conv" ? x.type.shape.size() == 4 : w.type.shape.size() == 2;
}

}  // namespace

PlanQuantization with_int8_bias_shifts(PlanQuantization quantization, const Graph& graph, const std::vector<HostTensor>& values,
                                       const std::string& backend) {
  quantization.bias_shifts.clear();
  const Graph ranged = with_calibrated_ranges(graph, quantization.ranges);
  const DataflowIndex index(ranged);
  const ScopedComputeThreads one_thread(1);
  for (NodeId n = 0; n < ranged.num_nodes(); ++n) {
    const Node& node = ranged.node(n);
    if (!corrects(ranged, node)) continue;
    const Value& y = ranged.value(node.outputs[0]);
    const Shape& ys = y.type.shape;
    if (ys.size() < 2) continue;
    const size_t axis = node.op == "Conv" ? 1 : ys.size() - 1;
    const int64_t channels = ys[axis], numel = y.type.numel();
    if (channels <= 0 || numel / channels < kMinPositions) continue;
    const Graph fn = extract_function(ranged, SubGraph(index, IndexSet(ranged.num_nodes(), {static_cast<int>(n)})));
    if (fn.outputs.size() != 1) continue;
    std::vector<ConstTensorView> in;
    for (ValueId v : fn.inputs) in.push_back(values.at(static_cast<size_t>(ranged.find_value(fn.value(v).name))).view());
    HostTensor out(fn.value(fn.outputs[0]).type);
    std::vector<TensorView> outs{out.view()};
    try {
      make_backend_compiler(backend)->compile(fn)->run(in, outs);
    } catch (const KernelUnsupported&) {   // declined in int8: it runs f32
      continue;
    } catch (const KernelError&) {
      continue;
    }
    // Mean of (int8 - fp32) per channel; `inner` elements per channel run, `outer` runs.
    const auto got = out.as<float>();
    const auto want = values.at(static_cast<size_t>(node.outputs[0])).as<float>();
    int64_t inner = 1;
    for (size_t d = axis + 1; d < ys.size(); ++d) inner *= ys[d];
    const int64_t outer = numel / (inner * channels);
    std::vector<double> sum(static_cast<size_t>(channels), 0.0);
    bool finite = true;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t i = 0; i < inner; ++i) {
          const size_t at = static_cast<size_t>((o * channels + c) * inner + i);
          const double d = static_cast<double>(got[at]) - static_cast<double>(want[at]);
          finite = finite && std::isfinite(d);
          sum[static_cast<size_t>(c)] += d;
        }
    if (!finite) continue;
    std::vector<float> shift(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) shift[static_cast<size_t>(c)] = static_cast<float>(sum[static_cast<size_t>(c)] / static_cast<double>(outer * inner));
    quantization.bias_shifts.push_back({y.name, std::move(shift)});
  }
  return quantization;
}

}  // namespace tessera
