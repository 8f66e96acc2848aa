// The --check oracle: the same model, inputs and weights interpreted node by node on `ref`, and
// every output of the partitioned run compared with it.
//
//   executor.model() ─▶ interpret(ref kernels)   ─▶ ref value of every model value
//   executor.run(observer) ─▶ after each call in main: its outputs vs ref   (partition outputs)
//                          ─▶ model outputs vs ref                          (max_abs_error, ok)
//
// Partition outputs are compared inside the run, while they are still live: the static memory plan
// reuses their workspace afterwards. Tolerance per dtype: floats pass when
// |a - r| <= atol * scale + rtol * |r| with scale = max(1, max |r| over the tensor), so an
// activation of magnitude 1e3 is held to 1e-1 absolute, not 1e-4 (accumulation order differs
// between backends and error grows with magnitude); NaN must match NaN. Integers and bool: exact.
// A tensor stored in f16 or bf16 is compared at its format's precision: rtol and atol are at
// least 8 units of its epsilon (f16 2^-10: 7.8e-3; bf16 2^-7: 6.3e-2), because ref rounds every
// node's result to the format while a backend that computes the function in f32 rounds only the
// function's results (half_widening.h), and the two differ by a few units in the last place.
// check_against_ref holds a tensor computed from half data to the same precision even when it is
// stored in f32 (an f16 model's outputs, Cast back to f32): a value's precision is the coarsest
// format among the values it is computed from.
// A quantized value is held to k quantization steps: an integer written by QuantizeLinear or a
// QLinear op may differ by k, a float written by a per-tensor DequantizeLinear by k times its
// scale. An int8 backend computes a group's float arithmetic in another order (integer sums, one
// output scale) than ref's node-by-node float kernels, and a value within float rounding of a
// rounding boundary lands one step apart. That flip is an input of every later group, where it
// moves sums by a weight times a step and can flip further roundings: steps compound with depth.
// k is the number of requantizations the value went through: with q the number of quantizing
// nodes (QuantizeLinear, QLinear*) on the longest path from the model's inputs to the value, its
// own included, k = max(1, q - 1) (the first quantization of a float input is the same division
// everywhere). One group, Q(x) -> DQ -> Conv -> Q -> DQ, is held to one step, as before; a deep
// network to more: mobilenet_v2 in QDQ form (65 quantizers on its longest path) differs from ref
// by 2 steps at its output and by up to 58 inside, ref and onednn each 3-4 steps from ONNX
// Runtime, whose quantized Add rounds differently from the spec. Integers elsewhere stay exact.
// max_abs_error is the largest |a - r| over the model outputs (floats and ints alike);
// max_rel_error the largest ||a - r||_2 / ||r||_2, the measure of accuracy budgets (a plan with
// reduced-precision partitions is judged by it: `tessera run --check` compares it with the
// plan's budget instead of the per-element tolerance).
#pragma once

#include <string>
#include <vector>

#include "runtime/executor.h"
#include "tessera/host_tensor.h"

namespace tessera {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-4;
  double step = 0.0;   // a quantized value: one quantization step (above)
};

struct TensorComparison {
  double max_abs_error = 0.0;   // largest |a - r|
  double rel_error = 0.0;       // relative_l2_error(a, r) (host_tensor.h)
  bool ok = true;
  int64_t worst = -1;           // element index of the first out-of-tolerance element, -1 if none
  std::string reason;           // "" when ok: "element 17: 0.51 vs 0.49 (tolerance 0.0011)"
};

TensorComparison compare_tensors(const HostTensor& actual, const HostTensor& reference, const Tolerance& tol = {});

// Per value of `g`, the quantized tolerance (above) of every value a quantizing node writes: for
// an integer, k; for a float written by a per-tensor DequantizeLinear, k times its scale; 0 for
// every other value.
std::vector<double> quantization_steps(const Graph& g);

struct CheckedValue {
  std::string name;             // the model value
  std::string call;             // the call in main that produced it ("" for a model output row)
  TensorComparison result;
};

struct CheckReport {
  double max_abs_error = 0.0;            // over the model outputs
  double max_rel_error = 0.0;            // end-to-end relative L2 error, max over the model outputs
  bool ok = true;                        // every compared value within tolerance
  std::vector<CheckedValue> outputs;     // model outputs, in order
  std::vector<CheckedValue> partitions;  // outputs of calls in main, in call order
  std::string first_failure() const;     // "" when ok
};

// Runs `executor` once on `inputs` with the per-call comparison, and ref on the whole model.
CheckReport check_against_ref(Executor& executor, const std::vector<HostTensor>& inputs, const Tolerance& tol = {});

}  // namespace tessera
