// The options every subcommand that reads a model shares: the model path, --input-shape and
// --no-simplify and --verbose (import warnings in full; cli_output.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/model_loader.h"

namespace tessera::cli {

struct ModelOptions {
  std::string path;
  std::vector<std::string> input_shapes;  // NAME=DxD...
  bool verbose = false;
  bool runs = false;   // the command executes the model: the missing-weight line says so
  bool no_simplify = false;               // --no-simplify: partition the graph exactly as exported
  mutable SimplifyReport simplified;      // what load() simplified (ONNX import)

  void add_to(CLI::App& cmd);
  Graph load() const;
};

}  // namespace tessera::cli
