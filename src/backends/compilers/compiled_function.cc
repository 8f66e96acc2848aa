// CompiledFunction's signature check (see tessera/backend_compiler.h).
#include <string>

#include "tessera/backend_compiler.h"

namespace tessera {

CompiledFunction::CompiledFunction(const Graph& fn) {
  for (ValueId v : fn.inputs) input_types_.push_back(fn.value(v).type);
  for (ValueId v : fn.outputs) output_types_.push_back(fn.value(v).type);
}

void CompiledFunction::run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) {
  if (inputs.size() != input_types_.size() || outputs.size() != output_types_.size())
    throw KernelError("compiled function: " + std::to_string(inputs.size()) + " inputs and " +
                      std::to_string(outputs.size()) + " outputs given, it takes " +
                      std::to_string(input_types_.size()) + " and " + std::to_string(output_types_.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].present || inputs[i].type != input_types_[i] || (!inputs[i].data && inputs[i].numel() > 0))
      throw KernelError("compiled function: input " + std::to_string(i) + " is " + to_string(inputs[i].type) +
                        ", expected " + to_string(input_types_[i]));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].type != output_types_[i] || (!outputs[i].data && outputs[i].numel() > 0))
      throw KernelError("compiled function: output " + std::to_string(i) + " is " + to_string(outputs[i].type) +
                        ", expected " + to_string(output_types_[i]));
  run_impl(inputs, outputs);
}

}  // namespace tessera
