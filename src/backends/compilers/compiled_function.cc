// CompiledFunction's signature check (see tessera/backend_compiler.h).
#include <algorithm>
#include <string>

#include "backends/compilers/backend_compiler.h"
#include "backends/compilers/backend_registration.h"
#include "backends/compilers/half_widening.h"
#include "backends/compilers/openmp_park.h"

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
  if (runs_on_own_threads() && openmp_team_to_park()) run_with_openmp_parked([&] { run_impl(inputs, outputs); });
  else run_impl(inputs, outputs);
}

std::unique_ptr<CompiledFunction> BackendCompiler::compile(const Graph& fn, const BoundaryLayouts& layouts) const {
  if (registration_)
    for (const Node& node : fn.nodes)
      if (!registration_->ops.builds(node.op))
        throw KernelUnsupported(name() + ": node '" + node.name + "' (" + node.op + "): not in " + name() +
                                "'s op table (src/backends/registered_backends.inc)");
  BoundaryLayouts full = layouts;
  if (full.inputs.empty()) full.inputs.assign(fn.inputs.size(), Layout::plain);
  if (full.outputs.empty()) full.outputs.assign(fn.outputs.size(), Layout::plain);
  if (full.inputs.size() != fn.inputs.size() || full.outputs.size() != fn.outputs.size())
    throw KernelError(name() + ": " + std::to_string(full.inputs.size()) + "/" + std::to_string(full.outputs.size()) +
                      " boundary layouts for a function of " + std::to_string(fn.inputs.size()) + " inputs and " +
                      std::to_string(fn.outputs.size()) + " outputs");
  auto check = [&](const std::vector<Layout>& ls, const std::vector<ValueId>& vs) {
    for (size_t i = 0; i < ls.size(); ++i)
      if (ls[i] != Layout::plain && !layout_sensitive(fn.value(vs[i]).type))
        throw KernelError(name() + ": layout " + to_string(ls[i]) + " asked for '" + fn.value(vs[i]).name + "' (" +
                          to_string(fn.value(vs[i]).type) + "), which has one memory order");
  };
  check(full.inputs, fn.inputs);
  check(full.outputs, fn.outputs);
  // Varying inputs reach compile_impl(fn, layouts) even when every layout is plain; a backend that
  // keeps nothing between runs ignores them (the default compile_impl below).
  const bool plain_only = full.all_plain() && std::none_of(full.varying_inputs.begin(), full.varying_inputs.end(), [](bool b) { return b; });
  if (widens_half() && has_half_values(fn)) {   // half_widening.h
    const Graph wide = widen_function(fn);
    std::unique_ptr<CompiledFunction> inner = plain_only ? compile_impl(wide) : compile_impl(wide, full);
    inner->layouts_ = full;
    std::unique_ptr<CompiledFunction> out = make_widened_function(fn, std::move(inner));
    out->layouts_ = std::move(full);
    return out;
  }
  std::unique_ptr<CompiledFunction> out = plain_only ? compile_impl(fn) : compile_impl(fn, full);
  out->layouts_ = std::move(full);
  return out;
}

std::unique_ptr<CompiledFunction> BackendCompiler::compile_impl(const Graph& fn, const BoundaryLayouts& layouts) const {
  if (!layouts.all_plain())
    throw KernelUnsupported(name() + ": its functions take plain boundaries only (asked for another layout)");
  return compile_impl(fn);
}

}  // namespace tessera
