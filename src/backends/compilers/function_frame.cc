// FunctionFrame (see function_frame.h).
#include "backends/compilers/function_frame.h"

#include <string>

namespace tessera {

FunctionFrame::FunctionFrame(const Graph& fn)
    : fn_(&fn), owned_(fn.values.size()), ptr_(fn.values.size(), nullptr),
      input_slot_(fn.values.size(), -1), output_slot_(fn.values.size(), -1) {
  for (size_t i = 0; i < fn.inputs.size(); ++i) input_slot_[idx(fn.inputs[i])] = static_cast<int>(i);
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    const Value& v = fn.value(fn.outputs[i]);
    if (v.kind != ValueKind::Intermediate)
      throw KernelUnsupported("function output '" + v.name + "' is not computed by a node");
    output_slot_[idx(fn.outputs[i])] = static_cast<int>(i);
  }
  for (size_t v = 0; v < fn.values.size(); ++v) {
    const Value& val = fn.values[v];
    if (!val.is_constant()) continue;
    if (val.data) {
      owned_[v] = HostTensor::from_tensor(Tensor{val.type, val.data});
    } else if (is_float(val.type.dtype)) {
      owned_[v] = HostTensor::random(val.type, 0x7e55e7a0u + v);
    } else {
      throw KernelUnsupported("constant '" + val.name + "' (" + to_string(val.type) + ") has no data");
    }
    ptr_[v] = owned_[v].bytes.data();
  }
}

void FunctionFrame::materialize(ValueId v) {
  if (v == kNoValue) return;
  const Value& val = fn_->value(v);
  if (val.kind != ValueKind::Intermediate || output_slot_[idx(v)] >= 0 || !owned_[idx(v)].bytes.empty()) return;
  owned_[idx(v)] = HostTensor(val.type);
  ptr_[idx(v)] = owned_[idx(v)].bytes.data();
}

void FunctionFrame::bind(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) {
  for (size_t i = 0; i < fn_->inputs.size(); ++i)
    ptr_[idx(fn_->inputs[i])] = const_cast<void*>(inputs[i].data);  // read-only by contract
  for (size_t i = 0; i < fn_->outputs.size(); ++i) ptr_[idx(fn_->outputs[i])] = outputs[i].data;
}

ConstTensorView FunctionFrame::cview(ValueId v) const {
  if (v == kNoValue) return ConstTensorView::missing();
  return ConstTensorView(fn_->value(v).type, ptr_[idx(v)]);
}

TensorView FunctionFrame::view(ValueId v) const {
  if (v == kNoValue) return TensorView{};
  return TensorView{fn_->value(v).type, ptr_[idx(v)]};
}

size_t FunctionFrame::owned_bytes() const {
  size_t n = 0;
  for (const HostTensor& t : owned_) n += t.bytes.size();
  return n;
}

}  // namespace tessera
