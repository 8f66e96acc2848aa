// Window fit check (window_check.h).
#include "frontend/window_check.h"

#include "tessera/error.h"

namespace tessera::detail {

void check_windows(const Graph& g, const std::string& file) {
  for (const Node& n : g.nodes) {
    if (n.op == "Conv" || n.op == "ConvTranspose" || n.op == "ConvInteger" || n.op == "QLinearConv") {
      const int64_t group = attr_int(n.attrs, "group", 1);
      const Shape* x = n.inputs.empty() || n.inputs[0] == kNoValue ? nullptr : &g.value(n.inputs[0]).type.shape;
      const int64_t channels = x && x->size() >= 2 ? (*x)[1] : -1;
      if (group < 1 || (channels > 0 && channels % group != 0))
        throw UserError(file, "node '" + n.name + "'",
                        n.op + " attribute group is " + std::to_string(group) +
                            (group < 1 ? "; it must be at least 1"
                                       : "; it must divide the input's " + std::to_string(channels) + " channels"));
    }
    const bool conv = n.op == "Conv";
    if (!conv && n.op != "MaxPool" && n.op != "AveragePool" && n.op != "LpPool") continue;
    if (n.inputs.empty() || n.inputs[0] == kNoValue) continue;
    const Shape& x = g.value(n.inputs[0]).type.shape;
    if (x.size() < 3) continue;
    const size_t k = x.size() - 2;
    std::vector<int64_t> kernel = attr_ints(n.attrs, "kernel_shape");
    if (kernel.empty() && conv && n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
      const Shape& w = g.value(n.inputs[1]).type.shape;
      if (w.size() == x.size()) kernel.assign(w.begin() + 2, w.end());
    }
    const std::string auto_pad = attr_string(n.attrs, "auto_pad", "NOTSET");
    if (kernel.size() != k || (auto_pad != "NOTSET" && auto_pad != "VALID")) continue;
    const auto dilations = attr_ints(n.attrs, "dilations", std::vector<int64_t>(k, 1));
    const auto pads = auto_pad == "VALID" ? std::vector<int64_t>(2 * k, 0) : attr_ints(n.attrs, "pads", std::vector<int64_t>(2 * k, 0));
    if (dilations.size() != k || pads.size() != 2 * k) continue;
    for (size_t d = 0; d < k; ++d) {
      const int64_t window = (kernel[d] - 1) * dilations[d] + 1;
      const int64_t padded = x[d + 2] + pads[d] + pads[d + k];
      if (padded < window)
        throw UserError(file, "node '" + n.name + "'",
                        n.op + " window " + std::to_string(window) + " is larger than its input's dimension " +
                            std::to_string(d + 2) + " (" + std::to_string(x[d + 2]) + ", padded " + std::to_string(padded) +
                            "; input " + g.value(n.inputs[0]).name + " is " + to_string(g.value(n.inputs[0]).type) + ")");
    }
  }
}

}  // namespace tessera::detail
