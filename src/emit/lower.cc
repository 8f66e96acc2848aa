// Lowering to kernel calls with explicit buffers, then static memory planning (see lower.h).
#include "emit/lower.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace tessera {
namespace {

class Lowerer {
 public:
  Lowerer(const Graph& g, const std::vector<CompositeFunction>& composites, const Dispatch& dispatch,
          const Module* module)
      : g_(g), dispatch_(dispatch), module_(module), buffer_of_(g.values.size(), -1) {
    std::unordered_map<std::string, NodeId> by_name;
    for (NodeId n = 0; n < g.num_nodes(); ++n) by_name[g.node(n).name] = n;
    for (const CompositeFunction& c : composites) {
      auto kernel = dispatch.composite_kernels.find(c.name());
      if (kernel == dispatch.composite_kernels.end()) continue;   // lowered node by node
      Group group{kernel->second, {}};
      for (const std::string& n : c.nodes) group.nodes.push_back(by_name.at(n));
      std::sort(group.nodes.begin(), group.nodes.end());
      for (NodeId n : group.nodes) group_of_[n] = static_cast<int>(groups_.size());
      groups_.push_back(std::move(group));
    }
    for (ValueId v : g.inputs) buffer(v, BufferKind::Param);
  }

  LoweredFunction run(int64_t alignment) {
    for (NodeId n = 0; n < g_.num_nodes(); ++n) {
      auto it = group_of_.find(n);
      if (it == group_of_.end()) lower_node(n);
      else if (groups_[static_cast<size_t>(it->second)].nodes.back() == n) lower_group(groups_[static_cast<size_t>(it->second)]);
    }
    std::vector<BufferLifetime> lifetimes = workspace_lifetimes(out_);
    out_.memory = plan_memory(lifetimes, alignment);
    size_t k = 0;
    for (Buffer& b : out_.buffers)
      if (b.kind == BufferKind::Workspace) b.offset = out_.memory.offsets[k++];
    return std::move(out_);
  }

 private:
  struct Group {
    std::string kernel;
    std::vector<NodeId> nodes;   // ascending
  };

  int buffer(ValueId v, BufferKind kind) {
    int& b = buffer_of_[static_cast<size_t>(v)];
    if (b < 0) {
      b = static_cast<int>(out_.buffers.size());
      out_.buffers.push_back(Buffer{g_.value(v).name, g_.value(v).type, kind});
    }
    return b;
  }
  int read(ValueId v) {
    if (v == kNoValue) return -1;
    const Value& val = g_.value(v);
    int b = buffer(v, val.is_constant() ? BufferKind::Constant : BufferKind::Workspace);
    out_.buffers[static_cast<size_t>(b)].last = call_index();
    return b;
  }
  int write(ValueId v) {
    int b = buffer(v, g_.is_output(v) ? BufferKind::Output : BufferKind::Workspace);
    Buffer& buf = out_.buffers[static_cast<size_t>(b)];
    buf.first = call_index();
    buf.last = std::max(buf.last, buf.first);
    return b;
  }
  int call_index() const { return static_cast<int>(out_.calls.size()); }

  void lower_node(NodeId n) {
    const Node& node = g_.node(n);
    const Function* callee = module_ ? module_->callee(node) : nullptr;
    KernelCall call{callee ? "@" + callee->symbol : dispatch_kernel(dispatch_, g_, node), node.name, {}, {}};
    for (ValueId v : node.inputs) call.inputs.push_back(read(v));
    for (ValueId v : node.outputs) call.outputs.push_back(write(v));
    out_.calls.push_back(std::move(call));
  }

  // One fused call: inputs read from outside the match, outputs used outside it.
  void lower_group(const Group& group) {
    std::set<ValueId> produced;
    for (NodeId n : group.nodes)
      for (ValueId v : g_.node(n).outputs) produced.insert(v);
    auto consumers = g_.consumers();
    KernelCall call{group.kernel, "", {}, {}};
    std::set<ValueId> seen;
    for (NodeId n : group.nodes) {
      call.label += (call.label.empty() ? "" : "+") + g_.node(n).name;
      for (ValueId v : g_.node(n).inputs)
        if (v != kNoValue && !produced.count(v) && seen.insert(v).second) call.inputs.push_back(read(v));
    }
    for (NodeId n : group.nodes)
      for (ValueId v : g_.node(n).outputs) {
        bool escapes = g_.is_output(v);
        for (NodeId c : consumers[static_cast<size_t>(v)])
          escapes = escapes || !std::binary_search(group.nodes.begin(), group.nodes.end(), c);
        if (escapes) call.outputs.push_back(write(v));
      }
    out_.calls.push_back(std::move(call));
  }

  const Graph& g_;
  const Dispatch& dispatch_;
  const Module* module_;
  std::vector<int> buffer_of_;
  std::vector<Group> groups_;
  std::unordered_map<NodeId, int> group_of_;
  LoweredFunction out_;
};

}  // namespace

std::vector<BufferLifetime> workspace_lifetimes(const LoweredFunction& lowered) {
  std::vector<BufferLifetime> out;
  for (const Buffer& b : lowered.buffers)
    if (b.kind == BufferKind::Workspace) out.push_back({static_cast<int64_t>(b.type.bytes()), b.first, b.last});
  return out;
}

LoweredFunction lower_graph(const Graph& body, const std::vector<CompositeFunction>& composites,
                            const Dispatch& dispatch, const Module* calls_into, int64_t alignment) {
  return Lowerer(body, composites, dispatch, calls_into).run(alignment);
}

Module lower(const Module& module, const LowerOptions& options) {
  Module out = module;
  static const Dispatch kDefault;
  for (auto& [symbol, fn] : out.functions) {
    if (fn.is_extern()) continue;
    auto it = options.dispatch.find(fn.backend());
    fn.lowered = lower_graph(fn.body, fn.composites, it == options.dispatch.end() ? kDefault : it->second, nullptr,
                             options.alignment);
  }
  out.main_lowered = lower_graph(out.main, {}, kDefault, &out, options.alignment);
  return out;
}

}  // namespace tessera
