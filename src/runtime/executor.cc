// The executor's build pipeline and run loop (see executor.h).
#include "runtime/executor.h"

#include <chrono>

#include "backends/ref/ref_kernels.h"
#include "backends/compilers/backend_compiler.h"
#include "emit/emit_pipeline.h"
#include "tessera/error.h"
#include "runtime/model_data.h"

namespace tessera {

// A KernelError (a kernel rejecting a node's shapes or attributes) while compiling or running a
// user's model means the model, as imported, promised what no kernel can do: a 3x3 pool over a
// symbolic dim bound to 1, an index out of range in an input. It is reported as the model's error,
// naming the file and the node (the kernel's message names it), never as an internal error.
namespace {
std::string kernel_error_text(const KernelError& e) { return std::string("cannot run: ") + e.what(); }
}  // namespace

Executor::Executor(const Graph& graph, const Plan& plan, const ExecutorOptions& options) try
    : model_(with_seeded_weights(graph, options.seed)) {
  auto start = std::chrono::steady_clock::now();
  EmitOptions emit = default_emit_options(plan);
  emit.dump = options.dump;
  EmitResult emitted = emit_module(model_, plan, emit);
  skipped_ = std::move(emitted.notes);
  module_ = std::make_unique<Module>(std::move(emitted.module));
  if (!module_->main_lowered) throw UserError(plan.model, "", "emit produced no lowered main");

  ref_kernels_ = std::make_unique<KernelRegistry>(make_ref_kernels());
  LoweredProgram::InstanceFactory instances;
  if (options.instance_per_call)
    instances = [this](const std::string& symbol) {
      const ExternalModule& ext = module_->external_modules.at(symbol);
      auto& compiler = compilers_[ext.backend];
      if (!compiler) compiler = make_backend_compiler(ext.backend);
      const CompiledFunction& shared = *ext.artifact;   // every instance takes the layouts main was lowered for
      return compiler->compile(module_->functions.at(symbol).body, shared.layouts());
    };
  main_ = std::make_unique<LoweredProgram>(*module_, module_->main, *module_->main_lowered, *ref_kernels_, library_, instances);
  for (ValueId v : module_->main.outputs) outputs_.emplace_back(module_->main.value(v).type);
  for (ValueId v : module_->main.inputs) in_views_.emplace_back(module_->main.value(v).type, nullptr);
  for (HostTensor& t : outputs_) out_views_.push_back(t.view());
  compile_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
} catch (const KernelError& e) {
  throw UserError(graph.source, "", kernel_error_text(e));
}

Executor::~Executor() = default;

const std::vector<HostTensor>& Executor::run(std::span<const HostTensor> inputs, const StepObserver* observer) {
  const Graph& main = module_->main;
  if (inputs.size() != main.inputs.size())
    throw UserError(model_.source, "", std::to_string(inputs.size()) + " inputs given, the model has " +
                                           std::to_string(main.inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = main.value(main.inputs[i]);
    if (!(inputs[i].type == v.type))
      throw UserError(model_.source, v.name, "input has type " + to_string(inputs[i].type) + ", expected " + to_string(v.type));
    in_views_[i].data = inputs[i].bytes.data();
  }
  try {
    main_->run(in_views_, out_views_, observer);
  } catch (const KernelError& e) {
    throw UserError(model_.source, "", kernel_error_text(e));
  }
  return outputs_;
}

void Executor::run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) {
  const Graph& main = module_->main;
  auto check = [&](const char* what, size_t given, const std::vector<ValueId>& ids) {
    if (given != ids.size())
      throw UserError(model_.source, "", std::to_string(given) + " " + what + " given, the model has " + std::to_string(ids.size()));
  };
  check("inputs", inputs.size(), main.inputs);
  check("outputs", outputs.size(), main.outputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = main.value(main.inputs[i]);
    if (!(inputs[i].type == v.type))
      throw UserError(model_.source, v.name, "input has type " + to_string(inputs[i].type) + ", expected " + to_string(v.type));
    if (!inputs[i].data && v.type.numel() > 0) throw UserError(model_.source, v.name, "input buffer is null");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& v = main.value(main.outputs[i]);
    if (!(outputs[i].type == v.type))
      throw UserError(model_.source, v.name, "output buffer has type " + to_string(outputs[i].type) + ", expected " + to_string(v.type));
    if (!outputs[i].data && v.type.numel() > 0) throw UserError(model_.source, v.name, "output buffer is null");
  }
  main_->run(inputs, outputs, nullptr);
}

int64_t Executor::workspace_bytes() const {
  int64_t n = main_->workspace_bytes() + main_->instance_bytes();
  for (const auto& [symbol, ext] : module_->external_modules)
    if (ext.artifact) n += static_cast<int64_t>(ext.artifact->workspace_bytes());
  return n;
}

}  // namespace tessera
