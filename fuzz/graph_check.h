// Checks shared by the targets that produce a Graph: a loaded graph must survive what the CLI does
// next with it (hashing, the JSON writer and reader: `tessera print --json`, plans and modules
// name its nodes).
#pragma once

#include "fuzz_target.h"
#include "tessera/graph.h"
#include "frontend/json_graph.h"
#include "ir/structural_hash.h"

namespace tessera::fuzz {

inline void check_loaded_graph(const Graph& g) {
  (void)structural_hash(g);
  std::string text = graph_to_json(g).dump();
  // json_graph.h: graph_from_json(graph_to_json(g)) == g (the first campaign's finding, fixed:
  // shape_chain.json, shaping constants of folded nodes).
  ImportOptions quiet;
  quiet.warn = [](const std::string&) {};
  Graph back = graph_from_json(nlohmann::json::parse(text), g.source, quiet);
  back.source = g.source;
  if (!(back == g)) finding("JSON round trip", g.name + ": re-imported graph differs");
}

// Import options that swallow warnings (the CLI prints them through printable()).
inline ImportOptions checked_import_options() {
  ImportOptions options;
  options.warn = [](const std::string&) {};
  return options;
}

}  // namespace tessera::fuzz
