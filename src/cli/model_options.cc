#include "cli/model_options.h"

#include "cli/cli_output.h"

namespace tessera::cli {

void ModelOptions::add_to(CLI::App& cmd) {
  cmd.add_option("MODEL", path, "model file (.onnx or tessera .json)")->required();
  cmd.add_option("--input-shape", input_shapes, "bind a symbolic input shape, NAME=1x3x224x224 (repeatable)");
  cmd.add_flag("--no-simplify", no_simplify,
               "keep the ONNX graph as exported (no Identity/no-op removal, no BatchNormalization folding)");
  cmd.add_flag("--verbose", verbose, "print every import warning (e.g. each weight missing from disk), not a summary");
}

Graph ModelOptions::load() const {
  ImportOptions opt;
  for (const auto& s : input_shapes) opt.input_shapes.insert(parse_input_shape(s, "--input-shape"));
  opt.simplify = !no_simplify;
  opt.simplified = &simplified;
  ImportWarnings warnings(path, verbose);
  opt.warn = [&](const std::string& w) { warnings.add(w); };
  Graph g = load_model(path, opt);
  warnings.print(runs);
  return g;
}

}  // namespace tessera::cli
