// DTypeSupport (see src/partition/dtype_support.h).
#include "partition/dtype_support.h"

#include <algorithm>

namespace tessera {
namespace {

std::string joined(const std::vector<DType>& dtypes) {
  std::string out;
  for (DType t : dtypes) out += (out.empty() ? "" : ",") + std::string(dtype_name(t));
  return out;
}

}  // namespace

const std::vector<DType>& DTypeSupport::dtypes_of(const std::string& op) const {
  auto it = per_op.find(op);
  return it == per_op.end() ? default_dtypes : it->second;
}

std::optional<std::string> DTypeSupport::refuses(const Graph& g, const Node& n) const {
  if (all) return std::nullopt;
  const std::vector<DType>& takes = dtypes_of(n.op);
  auto check = [&](ValueId v) -> std::optional<std::string> {
    if (v == kNoValue) return std::nullopt;
    const Value& value = g.value(v);
    if (value.is_constant() && !value.is_weight()) return std::nullopt;
    if (std::find(takes.begin(), takes.end(), value.type.dtype) != takes.end()) return std::nullopt;
    return std::string(dtype_name(value.type.dtype)) + " tensor on " + n.op + " (takes " + joined(takes) + ")";
  };
  const auto operands = per_input.find(n.op);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ValueId v = n.inputs[i];
    if (operands != per_input.end() && v != kNoValue) {
      if (auto own = operands->second.find(i); own != operands->second.end()) {
        const DType t = g.value(v).type.dtype;
        if (std::find(own->second.begin(), own->second.end(), t) != own->second.end()) continue;
        return std::string(dtype_name(t)) + " operand " + std::to_string(i) + " of " + n.op + " (takes " + joined(own->second) + ")";
      }
    }
    if (auto why = check(v)) return why;
  }
  for (ValueId v : n.outputs)
    if (auto why = check(v)) return why;
  return std::nullopt;
}

std::string DTypeSupport::describe() const {
  if (all) return "*";
  std::string out = joined(default_dtypes);
  for (const auto& [op, dtypes] : per_op) out += "; " + op + ": " + joined(dtypes);
  for (const auto& [op, operands] : per_input)
    for (const auto& [i, dtypes] : operands) out += "; " + op + "[" + std::to_string(i) + "]: " + joined(dtypes);
  return out;
}

}  // namespace tessera
