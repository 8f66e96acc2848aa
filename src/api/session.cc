// Model, load_plan and Session (include/tessera/session.h): thin, checked wrappers over the
// importer, the plan reader and the Executor.
#include "tessera/session.h"

#include <cstdio>
#include "runtime/plan_backends.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/error.h"
#include "runtime/executor.h"
#include "frontend/import_warnings.h"
#include "tessera/model_loader.h"

namespace tessera {
namespace {

std::vector<TensorInfo> infos(const Graph& g, const std::vector<ValueId>& ids) {
  std::vector<TensorInfo> out;
  for (ValueId v : ids) out.push_back({g.value(v).name, g.value(v).type});
  return out;
}

}  // namespace

Model Model::load(const std::string& path, const std::map<std::string, Shape>& input_shapes, bool verbose_warnings,
                  const OptionSpelling& spelling) {
  ImportOptions options;
  options.input_shapes = input_shapes;
  options.spelling = spelling;
  ImportWarnings warnings(path, verbose_warnings, "verbose=True");
  options.warn = [&](const std::string& w) { warnings.add(w); };
  Model model(load_model(path, options));
  warnings.print(/*runs=*/true);
  return model;
}

Model::Model(Graph graph) : graph_(std::make_shared<const Graph>(std::move(graph))) {}

std::vector<TensorInfo> Model::inputs() const { return infos(*graph_, graph_->inputs); }
std::vector<TensorInfo> Model::outputs() const { return infos(*graph_, graph_->outputs); }
std::string Model::fingerprint() const { return model_fingerprint(*graph_); }

Plan load_plan(const std::string& path, const Model& model) { return read_plan_file(path, model.graph()); }

Session::Session(const Model& model, const Plan& plan, const SessionOptions& options)
    : model_(model), plan_(plan), options_(options), inputs_(model.inputs()), outputs_(model.outputs()) {
  if (options.threads < 1) throw UserError("Session", "threads", "must be >= 1");
  // A Plan read by load_plan was checked already; one made or edited in memory is checked here.
  check_plan_binding(plan, model.graph(), plan.model.empty() ? std::string("plan") : plan.model);
  if (auto cycle = partition_cycle(plan, model.graph()))
    throw UserError(plan.model.empty() ? "plan" : plan.model, "partitions", "the partitions form a cycle (" + *cycle + ")");
  for (const Partition& p : plan.partitions) {
    if (p.nodes.size() != model.graph().num_nodes())
      throw UserError(plan.model.empty() ? "plan" : plan.model, "partitions",
                      "the plan was read against another model (" + std::to_string(p.nodes.size()) +
                          " nodes, this model has " + std::to_string(model.graph().num_nodes()) + ")");
  }
  const std::string file = plan.model.empty() ? std::string("plan") : plan.model;
  for (const std::string& note : check_plan_backends(plan, model.graph(), file, options.allow_fallback))
    std::fprintf(stderr, "tessera: warning: %s\n", note.c_str());
  if (auto mismatch = plan_machine_mismatch(plan, options.threads, file))
    std::fprintf(stderr, "tessera: warning: %s\n", mismatch->c_str());
  set_compute_threads(options.threads);
  ExecutorOptions eo;
  eo.seed = options.seed;
  executor_ = std::make_unique<Executor>(model.graph(), plan, eo);
}

Session::~Session() = default;

void Session::run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) {
  set_compute_threads(options_.threads);
  executor_->run(inputs, outputs);
}

std::vector<ConstTensorView> Session::ordered(const std::map<std::string, HostTensor>& inputs) const {
  const std::string& file = model_.path();
  std::vector<ConstTensorView> in;
  for (const TensorInfo& info : inputs_) {
    auto it = inputs.find(info.name);
    if (it == inputs.end()) throw UserError(file, info.name, "input missing (the model's inputs are given by name)");
    in.push_back(it->second.view());
  }
  for (const auto& [name, _] : inputs) {
    bool known = false;
    for (const TensorInfo& info : inputs_) known |= info.name == name;
    if (!known) throw UserError(file, name, "the model has no input of this name");
  }
  return in;
}

std::map<std::string, HostTensor> Session::run(const std::map<std::string, HostTensor>& inputs) {
  std::vector<ConstTensorView> in = ordered(inputs);
  std::map<std::string, HostTensor> out;
  std::vector<TensorView> views;
  std::vector<HostTensor> owned;
  owned.reserve(outputs_.size());
  for (const TensorInfo& info : outputs_) {
    owned.emplace_back(info.type);
    views.push_back(owned.back().view());
  }
  run(in, views);
  for (size_t i = 0; i < outputs_.size(); ++i) out[outputs_[i].name] = std::move(owned[i]);
  return out;
}

std::vector<CallProfile> Session::profile(const std::map<std::string, HostTensor>& inputs, int repeat) {
  if (repeat < 1) throw UserError("Session", "repeat", "must be >= 1");
  std::vector<ConstTensorView> views = ordered(inputs);
  std::vector<HostTensor> in;
  for (size_t i = 0; i < views.size(); ++i) {
    if (views[i].type != inputs_[i].type)
      throw UserError(model_.path(), inputs_[i].name,
                      "input has type " + to_string(views[i].type) + ", expected " + to_string(inputs_[i].type));
    in.push_back(inputs.at(inputs_[i].name));
  }
  set_compute_threads(options_.threads);
  std::vector<CallProfile> calls = profile_calls(*executor_, in, repeat);
  attach_plan_costs(calls, *executor_, plan_);
  return calls;
}

double Session::compile_ms() const { return executor_->compile_ms(); }
const std::vector<std::string>& Session::codegen_skipped() const { return executor_->codegen_skipped(); }

}  // namespace tessera
