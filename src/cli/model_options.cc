#include "cli/model_options.h"

#include "cli/cli_output.h"
#include <cstdio>
#include "tessera/error.h"
#include "frontend/import_warnings.h"
#include "support/text.h"

namespace tessera::cli {

void ModelOptions::add_to(CLI::App& cmd) {
  cmd.add_option("MODEL", path, "model file (.onnx or tessera .json)")->required();
  cmd.add_option("--input-shape", input_shapes, "bind a symbolic input shape, NAME=1x3x224x224 (repeatable)");
  cmd.add_flag("--no-simplify", no_simplify,
               "keep the ONNX graph as exported (no Identity/no-op removal, no BatchNormalization folding)");
  cmd.add_flag("--verbose", verbose, "print every import warning (e.g. each weight missing from disk), not a summary");
}

namespace {

bool is_symbolic_warning(const std::string& w) { return w.find("has symbolic dimensions") != std::string::npos; }

}  // namespace

Graph ModelOptions::load() const { return load_for_plan({}); }

Graph ModelOptions::load_for_plan(const std::vector<std::pair<std::string, Shape>>& plan_shapes) const {
  ImportOptions opt;
  for (const auto& s : input_shapes) {
    auto [name, shape] = parse_input_shape(s, "--input-shape");
    if (!opt.input_shapes.emplace(name, shape).second)
      throw UserError("--input-shape", name, "given twice; bind each input once");
  }
  opt.simplify = !no_simplify;
  opt.spelling = cli_spelling;
  opt.simplified = &simplified;
  opt.symbolic = &symbolic;
  std::vector<std::string> held;   // the import's warnings, printed once the binding is settled
  opt.warn = [&](const std::string& w) { held.push_back(w); };
  Graph g = load_model(path, opt);
  bool rebound = false;
  if (input_shapes.empty() && !symbolic.empty() && !plan_shapes.empty()) {
    ImportOptions again = opt;
    std::string bound;
    for (const SymbolicInput& in : symbolic)
      for (const auto& [name, shape] : plan_shapes)
        if (name == in.name && shape.size() == in.dims.size()) {
          again.input_shapes[name] = shape;
          bound += (bound.empty() ? "" : " ") + name + "=" + shape_to_string(shape);
        }
    if (!bound.empty()) {
      std::vector<std::string> second;
      again.warn = [&](const std::string& w) { second.push_back(w); };
      try {
        g = load_model(path, again);
      } catch (const UserError&) {
        // The plan's shapes do not fit this model: keep the first load, and let the plan's
        // binding check say how they differ.
        return load_for_plan({});
      }
      held = std::move(second);
      rebound = true;
      std::fprintf(stderr, "tessera: note: symbolic input dimensions bound as the plan records them: "
                           "--input-shape %s\n", bound.c_str());
    }
  }
  ImportWarnings warnings(path, verbose);
  for (const std::string& w : held)
    if (!(rebound && is_symbolic_warning(w))) warnings.add(w);
  warnings.print(runs);
  return g;
}

}  // namespace tessera::cli
