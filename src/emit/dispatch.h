// Dispatch: which kernel a lowered node calls, with backend overrides composed over one default.
//
//   default path      every node -> "ref.<Op>" (tessera's reference kernels cover every op;
//                     a node a pass rewrote into a backend domain -> "<domain>.<Op>")
//   eigen overrides   Softmax -> "eigen.softmax"           (tried first, in order)
//   composite kernels "onednn.conv_bias_relu" -> one fused call for the whole match
//
//   lower(fn on eigen):  Relu -> ref.Relu,  Softmax -> eigen.softmax
//
// Composition, not a fork: a backend lists only the ops it implements differently; every other
// node falls through to the same default lowering every backend shares, so a fix to the default
// reaches every backend and an override can never silently drop an op (TVM's per-target
// strategies re-listed whole op tables; OpStrategy "plevel" overrides are the idea kept here).
// An override sees the node and its graph and may decline (nullopt), e.g. only 2-D Softmax.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera {

struct DispatchOverride {
  std::string name;   // debug name, "eigen.softmax"
  std::function<std::optional<std::string>(const Graph&, const Node&)> choose;   // kernel or decline
};

struct Dispatch {
  std::vector<DispatchOverride> overrides;                // tried in order, first answer wins
  std::map<std::string, std::string> composite_kernels;   // composite name -> fused kernel
};

// An override that maps every node of op type `op` to `kernel`.
DispatchOverride override_op(const std::string& op, const std::string& kernel);
// "ref.<Op>", or "<domain>.<Op>" for a node in a non-default domain.
std::string default_kernel(const Node& node);
// The overrides in order, then the default.
std::string dispatch_kernel(const Dispatch& dispatch, const Graph& graph, const Node& node);

}  // namespace tessera
