// Checks shared by the targets that produce a Graph: a loaded graph must survive what the CLI does
// next with it (hashing, the JSON writer and reader: `tessera print --json`, plans and modules
// name its nodes).
#pragma once

#include "fuzz_target.h"
#include "tessera/graph.h"
#include "tessera/json_graph.h"
#include "tessera/structural_hash.h"

namespace tessera::fuzz {

inline void check_loaded_graph(const Graph& g) {
  (void)structural_hash(g);
  std::string text = graph_to_json(g).dump();
  // Re-importing must work; equality is not checked: the first 60 s run found that a graph with
  // folded shape computations (tests/fuzz/corpus/json_graph/shape_chain.json) does not come back
  // equal, open in docs/fuzzing.md.
  (void)graph_from_json(nlohmann::json::parse(text), g.source);
}

// Import options that swallow warnings (the CLI prints them through printable()).
inline ImportOptions checked_import_options() {
  ImportOptions options;
  options.warn = [](const std::string&) {};
  return options;
}

}  // namespace tessera::fuzz
