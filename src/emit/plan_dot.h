// graph.dot / graph.svg: a plan drawn with Graphviz. Every model node is a box filled with its
// backend's colour; every partition is a cluster labelled with its function, backend and cost;
// a legend lists the backends; the title gives the model, search, cost model and total cost.
// Costs are printed as a person reads them (cost_display.h: milliseconds unless the model is mock).
//
//   ┌ tvmgen_default_onednn_main_0 ┐    ┌ legend ─────┐
//   │ onednn  cost 2.0             │    │ ■ onednn    │
//   │  [conv0 Conv] → [relu0 Relu] │    │ ■ ref       │
//   └──────────────────────────────┘    └─────────────┘
//
// Colours come from a fixed palette in sorted backend order, so equal plans draw identically.
// The SVG is rendered by Graphviz's `dot -Tsvg` (a Debian package scripts/setup.sh installs);
// a failure to run it is a UserError naming the output file.
#pragma once

#include <string>

#include "tessera/graph.h"
#include "tessera/plan.h"

namespace tessera {

// `model`: the model path for the title; empty = the path the plan records (show draws a plan made
// from another copy of the model under the path it was given).
std::string plan_to_dot(const Graph& graph, const Plan& plan, const std::string& model = "");
// Runs `dot -Tsvg` on `dot_text`, writing `svg_path` (atomically: temporary file + rename).
void write_svg(const std::string& dot_text, const std::string& svg_path);

}  // namespace tessera
