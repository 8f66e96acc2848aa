// Window geometry (see window.h).
#include "backends/ref/window.h"

#include <algorithm>
#include "ir/limits.h"

namespace tessera::ref {

Window forward_window(const Node& n, const std::vector<int64_t>& kernel, const Shape& in, const Shape& out,
                      bool ceil_mode) {
  const size_t k = in.size();
  Window w;
  w.kernel = attr_ints(n.attrs, "kernel_shape", kernel);
  w.strides = attr_ints(n.attrs, "strides", std::vector<int64_t>(k, 1));
  w.dilations = attr_ints(n.attrs, "dilations", std::vector<int64_t>(k, 1));
  if (w.kernel.size() != k || w.strides.size() != k || w.dilations.size() != k || out.size() != k)
    bad_node(n, "kernel_shape/strides/dilations do not match " + std::to_string(k) + " spatial dims");
  // Zero-sized windows and zero strides would divide by zero below (ONNX requires all >= 1), and
  // values past the tensor size limit would overflow the int64 arithmetic.
  for (size_t d = 0; d < k; ++d)
    for (int64_t v : {w.kernel[d], w.strides[d], w.dilations[d]})
      if (v < 1 || v > kMaxTensorElements)
        bad_node(n, "kernel_shape, strides and dilations must be in [1, 2^31) (spatial dim " + std::to_string(d) + ")");
  const std::string auto_pad = attr_string(n.attrs, "auto_pad", "NOTSET");
  w.pad_begin.assign(k, 0);
  w.pad_end.assign(k, 0);
  if (auto_pad == "NOTSET") {
    const auto pads = attr_ints(n.attrs, "pads", std::vector<int64_t>(2 * k, 0));
    if (pads.size() != 2 * k) bad_node(n, "pads has " + std::to_string(pads.size()) + " values");
    for (size_t d = 0; d < k; ++d) {
      w.pad_begin[d] = pads[d];
      w.pad_end[d] = pads[d + k];
      if (pads[d] < 0 || pads[d + k] < 0 || pads[d] > kMaxTensorElements || pads[d + k] > kMaxTensorElements)
        bad_node(n, "pads must be in [0, 2^31)");
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t d = 0; d < k; ++d) {
      const int64_t o = (in[d] + w.strides[d] - 1) / w.strides[d];
      const int64_t total = std::max<int64_t>(0, (o - 1) * w.strides[d] + w.effective_kernel(static_cast<int>(d)) - in[d]);
      w.pad_begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[d] = total - w.pad_begin[d];
    }
  } else if (auto_pad != "VALID") {
    unsupported(n, "auto_pad " + auto_pad);
  }
  for (size_t d = 0; d < k; ++d) {
    const int64_t span = in[d] + w.pad_begin[d] + w.pad_end[d] - w.effective_kernel(static_cast<int>(d));
    int64_t o = (ceil_mode ? (span + w.strides[d] - 1) / w.strides[d] : floor_div(span, w.strides[d])) + 1;
    // ceil_mode: the last window must start inside the input or the begin padding.
    if (ceil_mode && (o - 1) * w.strides[d] >= in[d] + w.pad_begin[d]) --o;
    if (o != out[d])
      bad_node(n, "output spatial dim " + std::to_string(d) + " is " + std::to_string(out[d]) + ", expected " +
                      std::to_string(o));
  }
  return w;
}

}  // namespace tessera::ref
