// FunctionFrame: where every value of a compiled function lives during one run.
//
// A compiled function's values come from four places: the caller's input buffers (fn.inputs), the
// caller's output buffers (fn.outputs), constants carried in the function (copied once at compile
// time) and intermediates the function owns. The frame resolves a ValueId to its data pointer:
//
//   compile:  FunctionFrame frame(fn);  frame.materialize(v) for each intermediate a kernel writes
//   run:      frame.bind(inputs, outputs);  frame.view(v) / frame.cview(v)
//
// Intermediates are materialized on request, so a backend that fuses a chain (eigen's elementwise
// programs, oneDNN's post-ops) owns no buffer for the values inside it. Not thread-safe: a frame
// belongs to one CompiledFunction, which runs on one thread at a time.
#pragma once

#include <span>
#include <vector>

#include "tessera/graph.h"
#include "tessera/host_tensor.h"
#include "backends/kernel.h"

namespace tessera {

class FunctionFrame {
 public:
  // Copies fn's constants (float constants without data get HostTensor::random values, seeded by
  // value id; other data-less constants throw KernelUnsupported). Throws KernelUnsupported when a
  // function output is not computed by a node of fn.
  explicit FunctionFrame(const Graph& fn);

  // Gives intermediate `v` an owned buffer (no-op for inputs, outputs, constants, repeats).
  void materialize(ValueId v);
  // Points the inputs and outputs at this run's buffers (counts are checked by the caller).
  void bind(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs);

  const TensorType& type(ValueId v) const { return fn_->value(v).type; }
  // kNoValue gives ConstTensorView::missing() / a null TensorView.
  ConstTensorView cview(ValueId v) const;
  TensorView view(ValueId v) const;
  // This run's data pointer of v (null for kNoValue): what a view built once with v's type
  // takes on each run, so that a run allocates no views (a TensorType's shape lives on the heap).
  void* data(ValueId v) const { return v == kNoValue ? nullptr : ptr_[idx(v)]; }
  const float* cf32(ValueId v) const { return static_cast<const float*>(ptr_[idx(v)]); }
  float* f32(ValueId v) const { return static_cast<float*>(ptr_[idx(v)]); }
  bool is_function_output(ValueId v) const { return output_slot_[idx(v)] >= 0; }
  bool has_data(ValueId v) const { return ptr_[idx(v)] != nullptr; }
  size_t owned_bytes() const;

 private:
  static size_t idx(ValueId v) { return static_cast<size_t>(v); }
  const Graph* fn_;
  std::vector<HostTensor> owned_;        // by ValueId; empty for values not owned
  std::vector<void*> ptr_;               // by ValueId; this run's data pointer
  std::vector<int> input_slot_, output_slot_;
};

}  // namespace tessera
