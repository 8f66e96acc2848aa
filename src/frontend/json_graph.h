// tessera's JSON graph format ("format": "tessera.graph", version 1; docs/formats.md).
//
// graph_to_json writes every value's type, so graph_from_json(graph_to_json(g)) == g. Constant
// data is written only when present (and only up to `max_data_elements` per constant; larger
// constants are written shape-only unless the limit is 0 = unlimited).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tessera/graph.h"
#include "tessera/model_loader.h"

namespace tessera {

nlohmann::json graph_to_json(const Graph& g, size_t max_data_elements = 0);
// `file` names the source in error messages; places are JSON paths like "nodes[3].inputs[1]".
Graph graph_from_json(const nlohmann::json& j, const std::string& file, const ImportOptions& options = {});

}  // namespace tessera
