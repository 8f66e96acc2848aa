// The options every subcommand that reads a model shares: the model path, --input-shape and
// --no-simplify and --verbose (import warnings in full; cli_output.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "frontend/simplify.h"
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
  mutable std::vector<SymbolicInput> symbolic;   // inputs whose symbolic dimensions load() bound to 1

  void add_to(CLI::App& cmd);
  Graph load() const;
  // The load of a command that runs a plan: when the user bound nothing (no --input-shape) and the
  // model has symbolic dimensions, those inputs take the shapes the plan records (a plan made with
  // --input-shape x=1x3x48x192 then runs without repeating it), with one note saying so; otherwise
  // load(). The "bound to 1" warning is printed only when the dimensions really stay at 1.
  Graph load_for_plan(const std::vector<std::pair<std::string, Shape>>& plan_shapes) const;
};

}  // namespace tessera::cli
