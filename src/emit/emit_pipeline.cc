#include "emit/emit_pipeline.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "backends/compilers/backend_compiler.h"
#include "tessera/error.h"
#include "emit/module_onnx.h"
#include "emit/module_printer.h"
#include "emit/outline.h"
#include "emit/plan_dot.h"
#include "emit/qdq_model.h"
#include "ir/calibrated_ranges.h"

namespace tessera {

EmitResult emit_module(const Graph& graph, const Plan& plan, const EmitOptions& options) {
  EmitResult r;
  auto step = [&](const std::string& name, Module next) {
    if (options.dump && print_module(next) != print_module(r.module)) options.dump(name, next);
    r.module = std::move(next);
  };
  // An int8 plan's functions read the calibrated ranges it was made with (calibrated_ranges.h).
  const Graph ranged = plan.quantization ? with_calibrated_ranges(graph, *plan.quantization) : Graph();
  step("outline", outline(plan.quantization ? ranged : graph, plan));
  step("backend_passes", run_backend_passes(r.module, options.pipelines, options.dump));
  step("codegen", codegen(r.module, options.codegens, &r.notes));
  LowerOptions lower_options;
  lower_options.alignment = options.alignment;
  for (const BackendPipeline& p : options.pipelines) lower_options.dispatch[p.backend] = p.dispatch;
  step("lower", lower(r.module, lower_options));
  return r;
}

EmitOptions default_emit_options(const Plan& plan) {
  std::set<std::string> backends;
  for (const Partition& p : plan.partitions) backends.insert(p.backend);
  const std::vector<std::string> real = backend_compiler_names();
  EmitOptions options;
  for (const std::string& b : backends) {
    options.pipelines.push_back(builtin_pipeline(b));
    if (std::find(real.begin(), real.end(), b) != real.end())
      options.codegens.push_back(compiler_codegen(std::shared_ptr<const BackendCompiler>(make_backend_compiler(b))));
  }
  return options;
}

std::vector<std::string> write_emit_dir(const std::string& dir, const Graph& graph, const Plan& plan, const Module& module,
                    const std::string& plan_json) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError(dir, "", "cannot create directory: " + ec.message());
  const fs::path d(dir);
  std::vector<std::pair<fs::path, fs::path>> staged;   // temporary -> final
  auto stage_text = [&](const std::string& name, const std::string& text) {
    fs::path tmp = d / (name + ".tmp");
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw UserError((d / name).string(), "", "cannot write");
    staged.emplace_back(tmp, d / name);
  };
  try {
    stage_text("plan.json", plan_json);
    stage_text("module.txt", print_module(module));
    std::string onnx_bytes;
    if (!module_to_onnx(module).SerializeToString(&onnx_bytes))
      throw UserError((d / "module.onnx").string(), "", "cannot serialise the module (over 2 GiB?)");
    stage_text("module.onnx", onnx_bytes);
    for (const bool whole : {false, true})   // an int8 plan as QDQ, and the whole model in int8 (qdq_model.h)
      if (std::optional<onnx::ModelProto> qdq = plan_qdq_onnx(graph, plan, whole)) {
        const std::string name = whole ? "qdq_all.onnx" : "qdq.onnx";
        std::string bytes;
        if (!qdq->SerializeToString(&bytes)) throw UserError((d / name).string(), "", "cannot serialise the model (over 2 GiB?)");
        stage_text(name, bytes);
      }
    const std::string dot = plan_to_dot(graph, plan);
    stage_text("graph.dot", dot);
    write_svg(dot, (d / "graph.svg.tmp").string());
    staged.emplace_back(d / "graph.svg.tmp", d / "graph.svg");
  } catch (...) {
    for (const auto& [tmp, final_path] : staged) fs::remove(tmp, ec);
    throw;
  }
  std::vector<std::string> written;
  for (const auto& [tmp, final_path] : staged) {
    fs::rename(tmp, final_path);
    written.push_back(final_path.string());
  }
  return written;
}

}  // namespace tessera
