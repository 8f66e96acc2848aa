// tessera show MODEL --plan PLAN.json [--svg OUT.svg] [--dot OUT.dot] [--module OUT.txt]
//                                     [--qdq OUT.onnx] [--qdq-all OUT.onnx]
// Draws a plan that already exists (src/emit/plan_dot.h) and, with --module, prints the module
// the plan emits (outline, backend passes and lowering; no codegen, so nothing is compiled).
// --qdq / --qdq-all write an int8 plan, or the whole model with its ranges, as a QDQ ONNX model
// (src/emit/qdq_model.h), with the weights `run` uses (the model's, else seeded as `run --seed 0`).
// With no output option it prints the module text to stdout.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "cli/model_options.h"
#include "emit/emit_pipeline.h"
#include "tessera/error.h"
#include "emit/module_printer.h"
#include "tessera/plan.h"
#include "emit/plan_dot.h"
#include "emit/qdq_model.h"
#include "runtime/model_data.h"

namespace tessera::cli {
namespace {

struct ShowArgs {
  ModelOptions model;
  std::string plan;
  std::string svg, dot, module, qdq, qdq_all;
};

void write_text(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw UserError(path, "", "cannot write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw UserError(path, "", "cannot write");
}

void run_show(const ShowArgs& a) {
  Graph graph = a.model.load_for_plan(read_plan_input_shapes(a.plan));
  Plan plan = read_plan_file(a.plan, graph);
  // The QDQ models first: a plan without int8 fails before anything is written.
  std::vector<std::pair<std::string, std::string>> qdq_files;   // (path, bytes)
  for (const bool whole : {false, true}) {
    const std::string& path = whole ? a.qdq_all : a.qdq;
    if (path.empty()) continue;
    const std::optional<onnx::ModelProto> qdq = plan_qdq_onnx(with_seeded_weights(graph, 0), plan, whole);
    if (!qdq)
      throw UserError(a.plan, whole ? "quantization" : "partitions",
                      whole ? "the plan records no int8 ranges (made without onednn_int8 under --max-rel-error)"
                            : "the plan has no int8 partition: its module.onnx is the model it runs");
    std::string bytes;
    if (!qdq->SerializeToString(&bytes)) throw UserError(path, "", "cannot serialise the model (over 2 GiB?)");
    qdq_files.emplace_back(path, std::move(bytes));
  }
  for (const auto& [path, bytes] : qdq_files) {
    write_text(path, bytes);
    note_written(path);
  }
  const std::string dot = plan_to_dot(graph, plan, a.model.path);
  if (!a.dot.empty()) {
    write_text(a.dot, dot);
    note_written(a.dot);
  }
  if (!a.svg.empty()) {
    write_svg(dot, a.svg);
    note_written(a.svg);
  }
  if (!a.module.empty() || (a.svg.empty() && a.dot.empty() && a.qdq.empty() && a.qdq_all.empty())) {
    EmitOptions options = default_emit_options(plan);
    options.codegens.clear();
    const std::string text = print_module(emit_module(graph, plan, options).module);
    if (a.module.empty()) std::fputs(text.c_str(), stdout);
    else {
      write_text(a.module, text);
      note_written(a.module);
    }
  }
}

}  // namespace

void add_show_command(CLI::App& app) {
  auto args = std::make_shared<ShowArgs>();
  auto* cmd = app.add_subcommand("show", "draw an existing plan (Graphviz) or print the module it emits");
  args->model.add_to(*cmd);
  cmd->add_option("--plan", args->plan, "the plan (tessera.plan JSON) to show")->required();
  cmd->add_option("--svg", args->svg, "write the plan as SVG (needs Graphviz `dot`)");
  cmd->add_option("--dot", args->dot, "write the plan as Graphviz DOT");
  cmd->add_option("--module", args->module, "write the emitted module's text IR here");
  cmd->add_option("--qdq", args->qdq, "write the int8 plan as a QDQ ONNX model (QuantizeLinear/DequantizeLinear where it quantizes)");
  cmd->add_option("--qdq-all", args->qdq_all, "write the whole model quantized with the plan's int8 ranges as a QDQ ONNX model");
  cmd->callback([args] { run_show(*args); });
}

}  // namespace tessera::cli
