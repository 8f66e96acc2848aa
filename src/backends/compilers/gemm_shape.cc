// GemmShape (see gemm_shape.h).
#include "backends/compilers/gemm_shape.h"

#include <string>

#include "backends/compilers/broadcast.h"
#include "backends/kernel.h"

namespace tessera {
namespace {

// Per-batch offsets of an operand whose leading dims `lead` broadcast to `out_batch`.
std::vector<int64_t> batch_offsets(const Shape& lead, const Shape& out_batch, int64_t matrix) {
  const std::vector<int64_t> strides = broadcast_strides(lead, out_batch);
  int64_t total = 1;
  for (int64_t d : out_batch) total *= d;
  std::vector<int64_t> offsets(static_cast<size_t>(total));
  std::vector<int64_t> idx(out_batch.size(), 0);
  for (int64_t b = 0; b < total; ++b) {
    int64_t off = 0;
    for (size_t k = 0; k < idx.size(); ++k) off += idx[k] * strides[k];
    offsets[static_cast<size_t>(b)] = off * matrix;
    for (size_t k = idx.size(); k-- > 0;)
      if (++idx[k] < out_batch[k]) break; else idx[k] = 0;
  }
  return offsets;
}

}  // namespace

GemmShape gemm_shape(const Graph& fn, const Node& node) {
  auto fail = [&](const std::string& why) {
    return KernelUnsupported("node '" + node.name + "' (" + node.op + "): " + why);
  };
  if (node.op != "MatMul" && node.op != "Gemm") throw fail("not a GEMM");
  if (node.inputs.size() < 2 || node.outputs.empty()) throw fail("needs two inputs");
  GemmShape g;
  g.a = node.inputs[0];
  g.b = node.inputs[1];
  g.y = node.outputs[0];
  for (ValueId v : {g.a, g.b, g.y})
    if (fn.value(v).type.dtype != DType::f32) throw fail("only f32 is supported");
  Shape a = fn.value(g.a).type.shape, b = fn.value(g.b).type.shape;
  if (node.op == "Gemm") {
    if (a.size() != 2 || b.size() != 2) throw fail("Gemm operands must be 2-D");
    g.trans_a = attr_int(node.attrs, "transA", 0) != 0;
    g.trans_b = attr_int(node.attrs, "transB", 0) != 0;
    g.alpha = static_cast<float>(attr_float(node.attrs, "alpha", 1.0));
    g.beta = static_cast<float>(attr_float(node.attrs, "beta", 1.0));
    g.M = g.trans_a ? a[1] : a[0];
    g.K = g.trans_a ? a[0] : a[1];
    g.N = g.trans_b ? b[0] : b[1];
    if ((g.trans_b ? b[1] : b[0]) != g.K) throw fail("inner dimensions differ");
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      g.c = node.inputs[2];
      if (fn.value(g.c).type.dtype != DType::f32) throw fail("only f32 is supported");
      if (!broadcasts_to(fn.value(g.c).type.shape, {g.M, g.N})) throw fail("C does not broadcast to MxN");
    }
    g.a_offset = g.b_offset = {0};
    return g;
  }
  if (a.empty() || b.empty()) throw fail("scalar operands");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  g.M = a[a.size() - 2];
  g.K = a.back();
  g.N = b.back();
  if (b[b.size() - 2] != g.K) throw fail("inner dimensions differ");
  const Shape a_lead(a.begin(), a.end() - 2), b_lead(b.begin(), b.end() - 2);
  Shape out_batch(std::max(a_lead.size(), b_lead.size()), 1);
  for (const Shape* lead : {&a_lead, &b_lead})
    for (size_t i = 0; i < lead->size(); ++i) {
      int64_t& d = out_batch[out_batch.size() - lead->size() + i];
      if ((*lead)[i] != 1) {
        if (d != 1 && d != (*lead)[i]) throw fail("batch dimensions do not broadcast");
        d = (*lead)[i];
      }
    }
  g.a_offset = batch_offsets(a_lead, out_batch, g.M * g.K);
  g.b_offset = batch_offsets(b_lead, out_batch, g.K * g.N);
  g.batch = static_cast<int64_t>(g.a_offset.size());
  if (g.batch * g.M * g.N != fn.value(g.y).type.numel()) throw fail("output size disagrees with the operands");
  return g;
}

}  // namespace tessera
