// Sliding windows that do not fit: Conv / MaxPool / AveragePool / LpPool whose (dilated) window is
// larger than its padded input along some spatial dimension; and convolution groups that do not
// divide the channels (a group of 0 passes ONNX's inference and divides by zero in a kernel).
//
// ONNX's shape inference computes such an output dimension with truncating division,
// (1 + 0 - 2) / 2 + 1 = 1, where the operator's definition (floor) gives 0: the graph imports
// "fine" and the model dies later inside a kernel. It happens to every first try at a model with
// symbolic spatial dimensions bound to 1 (PaddleOCR's cls and rec). The importer checks once,
// after inference, and reports the node, the dimension and the sizes; import_onnx adds which
// symbolic dimensions were bound and an input_shapes binding that works.
#pragma once

#include <string>

#include "tessera/graph.h"

namespace tessera::detail {

// Throws UserError("FILE: node 'N': ...") for the first node (in graph order) whose window does
// not fit. Windows with auto_pad SAME_* always fit.
void check_windows(const Graph& g, const std::string& file);

}  // namespace tessera::detail
