// The options every subcommand that reads a model shares: the model path and --input-shape.
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

  void add_to(CLI::App& cmd);
  Graph load() const;
};

}  // namespace tessera::cli
