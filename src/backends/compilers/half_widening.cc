// Compiling f16/bf16 functions as f32 (see half_widening.h).
#include "backends/compilers/half_widening.h"

#include <algorithm>
#include <utility>

#include "backends/ref/half_convert.h"
#include "tessera/host_tensor.h"

namespace tessera {
namespace {

bool casts_to_half(const Node& n) {
  if (n.op != "Cast") return false;
  auto it = n.attrs.find("to");
  if (it == n.attrs.end() || !std::holds_alternative<int64_t>(it->second)) return false;
  auto to = dtype_from_onnx(static_cast<int>(std::get<int64_t>(it->second)));
  return to && is_half(*to);
}

// A half-precision tensor's data as f32 (null data stays null: shape-only).
Tensor widened_tensor(const Tensor& t) {
  Tensor out{TensorType{DType::f32, t.type.shape}, nullptr};
  if (!t.data) return out;
  const auto n = static_cast<size_t>(t.type.numel());
  auto bytes = std::make_shared<TensorBytes>(n * sizeof(float));
  widen_to_f32(t.type.dtype, t.data->data(), reinterpret_cast<float*>(bytes->data()), n);
  out.data = std::move(bytes);
  return out;
}

class WidenedFunction final : public CompiledFunction {
 public:
  WidenedFunction(const Graph& fn, std::unique_ptr<CompiledFunction> inner)
      : CompiledFunction(fn), inner_(std::move(inner)) {
    for (const TensorType& t : input_types()) in_f32_.push_back(is_half(t.dtype) ? HostTensor(f32_of(t)) : HostTensor());
    for (const TensorType& t : output_types()) out_f32_.push_back(is_half(t.dtype) ? HostTensor(f32_of(t)) : HostTensor());
  }

  size_t workspace_bytes() const override {
    size_t n = inner_->workspace_bytes();
    for (const auto* list : {&in_f32_, &out_f32_})
      for (const HostTensor& t : *list) n += t.bytes.size();
    return n;
  }

 protected:
  void run_impl(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) override {
    ins_.assign(inputs.begin(), inputs.end());
    outs_.assign(outputs.begin(), outputs.end());
    for (size_t i = 0; i < inputs.size(); ++i)
      if (is_half(inputs[i].type.dtype)) {
        widen_to_f32(inputs[i].type.dtype, inputs[i].data, in_f32_[i].as<float>().data(), in_f32_[i].count());
        ins_[i] = std::as_const(in_f32_[i]).view();
      }
    for (size_t i = 0; i < outputs.size(); ++i)
      if (is_half(outputs[i].type.dtype)) outs_[i] = out_f32_[i].view();
    inner_->run(ins_, outs_);
    for (size_t i = 0; i < outputs.size(); ++i)
      if (is_half(outputs[i].type.dtype))
        narrow_from_f32(outputs[i].type.dtype, out_f32_[i].as<float>().data(), outputs[i].data, out_f32_[i].count());
  }

 private:
  static TensorType f32_of(const TensorType& t) { return TensorType{DType::f32, t.shape}; }

  std::unique_ptr<CompiledFunction> inner_;
  std::vector<HostTensor> in_f32_, out_f32_;   // empty where the parameter or result is not half
  std::vector<ConstTensorView> ins_;
  std::vector<TensorView> outs_;
};

}  // namespace

bool has_half_values(const Graph& fn) {
  return std::any_of(fn.values.begin(), fn.values.end(), [](const Value& v) { return is_half(v.type.dtype); }) ||
         std::any_of(fn.nodes.begin(), fn.nodes.end(), casts_to_half);
}

Graph widen_function(const Graph& fn) {
  Graph out = fn;
  for (Value& v : out.values) {
    if (!is_half(v.type.dtype)) continue;
    Tensor t = widened_tensor(Tensor{v.type, v.data});
    v.type = t.type;
    v.data = t.data;
  }
  for (Node& n : out.nodes) {
    if (casts_to_half(n)) n.attrs["to"] = static_cast<int64_t>(dtype_to_onnx(DType::f32));
    for (auto& [name, attr] : n.attrs)
      if (auto* t = std::get_if<Tensor>(&attr); t && is_half(t->type.dtype)) attr = widened_tensor(*t);
  }
  return out;
}

std::unique_ptr<CompiledFunction> make_widened_function(const Graph& fn, std::unique_ptr<CompiledFunction> inner) {
  return std::make_unique<WidenedFunction>(fn, std::move(inner));
}

}  // namespace tessera
