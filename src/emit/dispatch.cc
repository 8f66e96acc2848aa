#include "emit/dispatch.h"

namespace tessera {

DispatchOverride override_op(const std::string& op, const std::string& kernel) {
  return {kernel, [op, kernel](const Graph&, const Node& n) -> std::optional<std::string> {
            if (n.op == op && n.domain.empty()) return kernel;
            return std::nullopt;
          }};
}

std::string default_kernel(const Node& node) { return (node.domain.empty() ? "ref" : node.domain) + "." + node.op; }

std::string dispatch_kernel(const Dispatch& dispatch, const Graph& graph, const Node& node) {
  for (const DispatchOverride& o : dispatch.overrides)
    if (auto kernel = o.choose(graph, node)) return *kernel;
  return default_kernel(node);
}

}  // namespace tessera
