// Calibrated activation ranges on a Graph (Value::range): what an int8 precision variant
// quantizes its sources with (src/backends/onednn/onednn_int8_variant.cc).
//
// A plan made with an int8 variant records the ranges by value name (Plan::quantization); every
// consumer of the plan (emit's outline, hence the executor, `run`, Python and C++ sessions) puts
// them back on its copy of the model before extracting functions, so the functions it compiles
// are the ones the search priced, hash for hash. A model without them is the fp32 model as
// imported.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

// (value name, (min, max)), in graph value order.
using CalibratedRanges = std::vector<std::pair<std::string, std::pair<float, float>>>;

// `graph` with Value::range set from `ranges`; KernelError-free: a name the graph lacks throws
// UserError(graph.source, name, ...).
Graph with_calibrated_ranges(const Graph& graph, const CalibratedRanges& ranges);

// The same with a plan's whole quantization: its ranges and its int8 bias shifts
// (Value::int8_bias_shift, by value name; UserError for a name the graph lacks).
Graph with_calibrated_ranges(const Graph& graph, const PlanQuantization& quantization);

}  // namespace tessera
