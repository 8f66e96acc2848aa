// Resolving a LoweredFunction into runnable steps, and running them (see lowered_program.h).
#include "runtime/lowered_program.h"

#include <algorithm>
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

  slot_type_.reserve(lowered.buffers.size());
  for (const Buffer& buf : lowered.buffers) slot_type_.push_back(buf.type);
  slot_layout_.assign(lowered.buffers.size(), Layout::plain);

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

    // Layouts: what the callee takes and gives (plain unless an extern function says otherwise).
    const BoundaryLayouts* layouts = step.compiled ? &step.compiled->layouts() : nullptr;
    auto wanted = [&](const std::vector<Layout>* ls, size_t i) {
      return ls && i < ls->size() ? (*ls)[i] : Layout::plain;
    };
    for (size_t i = 0; i < call.inputs.size(); ++i) {
      const int b = call.inputs[i];
      step.in_slots.push_back(b < 0 ? -1 : slot_in(b, wanted(layouts ? &layouts->inputs : nullptr, i)));
      step.in_types.push_back(b < 0 ? TensorType{} : slot_type_[static_cast<size_t>(b)]);
    }
    std::vector<std::pair<int, int>> then_convert;   // (side slot, output buffer)
    for (size_t i = 0; i < call.outputs.size(); ++i) {
      const int o = call.outputs[i];
      const Layout made = wanted(layouts ? &layouts->outputs : nullptr, i);
      int slot = o;
      if (made != Layout::plain && lowered.buffers[static_cast<size_t>(o)].kind == BufferKind::Output) {
        slot = add_side(slot_type_[static_cast<size_t>(o)]);
        then_convert.emplace_back(slot, o);
        converted_[{o, made}] = slot;
      }
      slot_layout_[static_cast<size_t>(slot)] = made;
      step.out_slots.push_back(slot);
      step.out_types.push_back(slot_type_[static_cast<size_t>(o)]);
      step.observed_plain.push_back(made == Layout::plain ? -1 : -2);   // -2: a plain copy made on first use
    }
    for (size_t i = 0; i < step.in_slots.size(); ++i)
      step.in_views.push_back(step.in_slots[i] < 0 ? ConstTensorView::missing() : ConstTensorView(step.in_types[i], nullptr));
    for (const TensorType& t : step.out_types) step.out_views.push_back(TensorView{t, nullptr});
    steps_.push_back(std::move(step));
    for (const auto& [side, o] : then_convert) add_conversion(side, slot_layout_[static_cast<size_t>(side)], o, Layout::plain);
  }
}

int LoweredProgram::add_side(const TensorType& type) {
  const size_t bytes = std::max<size_t>(type.bytes(), 1);
  auto* p = static_cast<std::byte*>(::operator new(bytes, kWorkspaceAlign));
  sides_.emplace_back(p, [](std::byte* q) { ::operator delete(q, kWorkspaceAlign); });
  ptr_.push_back(p);
  slot_type_.push_back(type);
  slot_layout_.push_back(Layout::plain);
  return static_cast<int>(ptr_.size()) - 1;
}

int LoweredProgram::slot_in(int slot, Layout layout) {
  const Layout have = slot_layout_[static_cast<size_t>(slot)];
  if (have == layout) return slot;
  if (auto it = converted_.find({slot, layout}); it != converted_.end()) return it->second;
  const int side = add_side(slot_type_[static_cast<size_t>(slot)]);
  slot_layout_[static_cast<size_t>(side)] = layout;
  converted_[{slot, layout}] = side;
  add_conversion(slot, have, side, layout);
  return side;
}

CompiledFunction* LoweredProgram::converter(const TensorType& type, Layout from, Layout to) {
  auto& fn = converters_[{type.dtype, type.shape, from, to}];
  if (!fn) {
    if (!conversion_compiler_) conversion_compiler_ = make_backend_compiler(kConversionBackend);
    fn = conversion_compiler_->compile(layout_conversion(type, from, to));
  }
  return fn.get();
}

void LoweredProgram::add_conversion(int from_slot, Layout from, int to_slot, Layout to) {
  const TensorType& type = slot_type_[static_cast<size_t>(from_slot)];
  conversion_calls_.push_back(std::make_unique<KernelCall>());
  KernelCall& call = *conversion_calls_.back();
  call.kernel = std::string("layout.") + to_string(from) + "->" + to_string(to);
  call.label = static_cast<size_t>(from_slot) < lowered_->buffers.size() ? lowered_->buffers[static_cast<size_t>(from_slot)].name
               : static_cast<size_t>(to_slot) < lowered_->buffers.size()  ? lowered_->buffers[static_cast<size_t>(to_slot)].name
                                                                          : std::string("(side)");
  Step step;
  step.call = &call;
  step.compiled = converter(type, from, to);
  step.in_slots = {from_slot};
  step.out_slots = {to_slot};
  step.in_types = {TensorType{type.dtype, physical_shape(type, from)}};
  step.out_types = {TensorType{type.dtype, physical_shape(type, to)}};
  step.in_views = {ConstTensorView(step.in_types[0], nullptr)};
  step.out_views = {TensorView{step.out_types[0], nullptr}};
  steps_.push_back(std::move(step));
}

LoweredProgram::~LoweredProgram() {
  if (workspace_) ::operator delete(workspace_, kWorkspaceAlign);
}

void LoweredProgram::bind_views(Step& step) const {
  for (size_t i = 0; i < step.in_slots.size(); ++i)
    if (step.in_slots[i] >= 0) step.in_views[i].data = ptr_[static_cast<size_t>(step.in_slots[i])];
  for (size_t i = 0; i < step.out_slots.size(); ++i) step.out_views[i].data = ptr_[static_cast<size_t>(step.out_slots[i])];
}

void LoweredProgram::run_step(Step& step) {
  bind_views(step);
  if (step.compiled) step.compiled->run(step.in_views, step.out_views);
  else if (step.nested) step.nested->run(step.in_views, step.out_views);   // its own steps, its own views
  else (*step.kernel)(*step.node, step.in_views, step.out_views);
}

void LoweredProgram::run(std::span<const ConstTensorView> params, std::span<const TensorView> outputs,
                         const StepObserver* observer) {
  if (params.size() != param_buffers_.size() || outputs.size() != output_buffers_.size())
    throw KernelError("lowered program: " + std::to_string(params.size()) + " params / " + std::to_string(outputs.size()) +
                      " outputs given, expected " + std::to_string(param_buffers_.size()) + " / " +
                      std::to_string(output_buffers_.size()));
  for (size_t i = 0; i < params.size(); ++i) ptr_[static_cast<size_t>(param_buffers_[i])] = const_cast<void*>(params[i].data);
  for (size_t i = 0; i < outputs.size(); ++i) ptr_[static_cast<size_t>(output_buffers_[i])] = outputs[i].data;

  const bool observing = observer && observer->on_step;
  for (Step& step : steps_) {
    run_step(step);
    if (!observing) continue;
    if (step.output_names.empty()) {   // a layout conversion: timed, nothing to compare
      observer->on_step(*step.call, step.output_names, {});
      continue;
    }
    observed_scratch_ = step.out_views;
    if (observer->reads_outputs)
      for (size_t i = 0; i < step.out_slots.size(); ++i) {
        if (step.observed_plain[i] == -1) continue;
        const int from = step.out_slots[i];
        if (step.observed_plain[i] == -2) step.observed_plain[i] = add_side(slot_type_[static_cast<size_t>(from)]);
        const TensorType& t = slot_type_[static_cast<size_t>(from)];
        const Layout l = slot_layout_[static_cast<size_t>(from)];
        ConstTensorView src(TensorType{t.dtype, physical_shape(t, l)}, ptr_[static_cast<size_t>(from)]);
        TensorView dst{t, ptr_[static_cast<size_t>(step.observed_plain[i])]};
        converter(t, l, Layout::plain)->run(std::span(&src, 1), std::span(&dst, 1));
        observed_scratch_[i] = dst;
      }
    observer->on_step(*step.call, step.output_names, observed_scratch_);
  }
}

}  // namespace tessera
