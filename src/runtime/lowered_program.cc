// Resolving a LoweredFunction into runnable steps, and running them (see lowered_program.h).
#include "tessera/lowered_program.h"

#include <new>
#include <unordered_map>

#include "tessera/error.h"

namespace tessera {
namespace {

constexpr std::align_val_t kWorkspaceAlign{64};

std::string where(const Graph& body) { return body.name.empty() ? std::string("main") : body.name; }

}  // namespace

LoweredProgram::LoweredProgram(const Module& module, const Graph& body, const LoweredFunction& lowered,
                               const KernelRegistry& ref_kernels, Library& library, const InstanceFactory& instances)
    : lowered_(&lowered), ptr_(lowered.buffers.size(), nullptr) {
  std::unordered_map<std::string, ValueId> value_by_name;
  for (ValueId v = 0; v < static_cast<ValueId>(body.values.size()); ++v) value_by_name[body.value(v).name] = v;
  std::unordered_map<std::string, int> buffer_by_name;
  for (size_t b = 0; b < lowered.buffers.size(); ++b) buffer_by_name[lowered.buffers[b].name] = static_cast<int>(b);

  workspace_bytes_ = lowered.memory.workspace_bytes;
  if (workspace_bytes_ > 0) workspace_ = static_cast<std::byte*>(::operator new(static_cast<size_t>(workspace_bytes_), kWorkspaceAlign));

  for (size_t b = 0; b < lowered.buffers.size(); ++b) {
    const Buffer& buf = lowered.buffers[b];
    switch (buf.kind) {
      case BufferKind::Param: param_buffers_.push_back(static_cast<int>(b)); break;
      case BufferKind::Output: break;   // ordered by body.outputs below
      case BufferKind::Workspace: ptr_[b] = workspace_ + buf.offset; break;
      case BufferKind::Constant: {
        auto it = value_by_name.find(buf.name);
        if (it == value_by_name.end() || !body.value(it->second).data)
          throw UserError(where(body), buf.name, "constant has no data (load the model with its weights or seed them)");
        ptr_[b] = const_cast<uint8_t*>(body.value(it->second).data->data());
        break;
      }
    }
  }
  for (ValueId v : body.outputs) {
    auto it = buffer_by_name.find(body.value(v).name);
    if (it == buffer_by_name.end() || lowered.buffers[static_cast<size_t>(it->second)].kind != BufferKind::Output)
      throw UserError(where(body), body.value(v).name, "output is not computed by a call (pass-through outputs are not supported)");
    output_buffers_.push_back(it->second);
  }

  std::map<std::string, int> calls_of;   // extern symbol -> call sites seen so far
  for (const KernelCall& call : lowered.calls) {
    Step step;
    step.call = &call;
    for (int o : call.outputs) step.output_names.push_back(lowered.buffers[static_cast<size_t>(o)].name);
    if (call.kernel.starts_with("@")) {
      const std::string symbol = call.kernel.substr(1);
      const Function* fn = module.find(symbol);
      if (!fn) throw UserError(where(body), call.label, "calls unknown function @" + symbol);
      if (fn->is_extern()) {
        auto ext = module.external_modules.find(symbol);
        if (ext == module.external_modules.end() || !ext->second.artifact)
          throw UserError(where(body), call.label, "extern stub @" + symbol + " has no compiled artifact");
        // The module's artifacts are const so modules can be copied and printed freely; running
        // one mutates only its own intermediate buffers, and this program is its only runner.
        step.compiled = const_cast<CompiledFunction*>(ext->second.artifact.get());
        if (calls_of[symbol]++ > 0 && instances) {
          instances_.push_back(instances(symbol));
          step.compiled = instances_.back().get();
        }
      } else {
        if (!fn->lowered) throw UserError(where(body), call.label, "function @" + symbol + " is neither compiled nor lowered");
        std::unique_ptr<LoweredProgram>& nested = library[symbol];
        if (!nested) nested = std::make_unique<LoweredProgram>(module, fn->body, *fn->lowered, ref_kernels, library);
        step.nested = nested.get();
      }
    } else if (call.kernel.starts_with("ref.")) {
      NodeId n = body.find_node(call.label);
      if (n == kNoNode) throw UserError(where(body), call.label, "kernel call names no node of the function");
      step.node = &body.node(n);
      step.kernel = ref_kernels.find(step.node->op);
      if (!step.kernel) throw UserError(where(body), call.label, "ref has no kernel for " + step.node->op);
    } else {
      throw UserError(where(body), call.label,
                      "kernel '" + call.kernel + "' has no implementation in the executor (only compiled functions and ref kernels run here)");
    }
    steps_.push_back(std::move(step));
  }
}

LoweredProgram::~LoweredProgram() {
  if (workspace_) ::operator delete(workspace_, kWorkspaceAlign);
}

void LoweredProgram::run(std::span<const ConstTensorView> params, std::span<const TensorView> outputs,
                         const StepObserver* observer) {
  if (params.size() != param_buffers_.size() || outputs.size() != output_buffers_.size())
    throw KernelError("lowered program: " + std::to_string(params.size()) + " params / " + std::to_string(outputs.size()) +
                      " outputs given, expected " + std::to_string(param_buffers_.size()) + " / " +
                      std::to_string(output_buffers_.size()));
  for (size_t i = 0; i < params.size(); ++i) ptr_[static_cast<size_t>(param_buffers_[i])] = const_cast<void*>(params[i].data);
  for (size_t i = 0; i < outputs.size(); ++i) ptr_[static_cast<size_t>(output_buffers_[i])] = outputs[i].data;

  const std::vector<Buffer>& buffers = lowered_->buffers;
  for (const Step& step : steps_) {
    in_scratch_.clear();
    out_scratch_.clear();
    for (int b : step.call->inputs) {
      if (b < 0) in_scratch_.push_back(ConstTensorView::missing());
      else in_scratch_.emplace_back(buffers[static_cast<size_t>(b)].type, ptr_[static_cast<size_t>(b)]);
    }
    for (int b : step.call->outputs) out_scratch_.push_back(TensorView{buffers[static_cast<size_t>(b)].type, ptr_[static_cast<size_t>(b)]});
    if (step.compiled) step.compiled->run(in_scratch_, out_scratch_);
    else if (step.nested) {
      // The nested run reuses its own scratch vectors; hand it copies of ours.
      std::vector<ConstTensorView> in = in_scratch_;
      std::vector<TensorView> out = out_scratch_;
      step.nested->run(in, out);
    } else (*step.kernel)(*step.node, in_scratch_, out_scratch_);
    if (observer && *observer) (*observer)(*step.call, step.output_names, out_scratch_);
  }
}

}  // namespace tessera
