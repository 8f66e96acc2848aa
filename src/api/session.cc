// Model, load_plan and Session (include/tessera/session.h): thin, checked wrappers over the
// importer, the plan reader and the Executor.
#include "tessera/session.h"

#include <cstdio>
#include "runtime/plan_backends.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/error.h"
#include "runtime/call_profile.h"
#include "runtime/executor.h"
#include "frontend/import_warnings.h"
#include "tessera/model_loader.h"
#include "search/shape_range.h"

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
  model.from_file_ = true;
  warnings.print(/*runs=*/true);
  return model;
}

Model::Model(Graph graph) : graph_(std::make_shared<const Graph>(std::move(graph))) {}

Model Model::with_input_shapes(const std::map<std::string, Shape>& input_shapes) const {
  if (!from_file_)
    throw UserError(graph_->source.empty() ? std::string("model") : graph_->source, "input_shapes",
                    "a model made in memory cannot be bound to other shapes; load it from its file (Model::load)");
  ImportOptions options;
  for (const TensorInfo& in : inputs()) options.input_shapes[in.name] = in.type.shape;
  for (const auto& [name, shape] : input_shapes) options.input_shapes[name] = shape;
  options.warn = [](const std::string&) {};   // said when the model was first loaded
  Model model(load_model(graph_->source, options));
  model.from_file_ = true;
  return model;
}

std::vector<TensorInfo> Model::inputs() const { return infos(*graph_, graph_->inputs); }
std::vector<TensorInfo> Model::outputs() const { return infos(*graph_, graph_->outputs); }
std::string Model::fingerprint() const { return model_fingerprint(*graph_); }

Plan load_plan(const std::string& path, const Model& model) { return read_plan_file(path, model.graph()); }

struct Session::Bound {
  Model model;
  Plan plan;
  std::unique_ptr<Executor> executor;
  std::vector<TensorInfo> outputs;
  uint64_t last_used = 0;   // Session::runs_ when these shapes were last asked for
};

namespace {

std::string plan_file(const Plan& plan) { return plan.model.empty() ? std::string("plan") : plan.model; }

std::vector<Shape> shapes_of(const std::vector<TensorInfo>& infos) {
  std::vector<Shape> out;
  for (const TensorInfo& t : infos) out.push_back(t.type.shape);
  return out;
}

}  // namespace

Session::Session(const Model& model, const Plan& plan, const SessionOptions& options)
    : model_(model), options_(options), inputs_(model.inputs()), outputs_(model.outputs()) {
  if (options.threads < 1) throw UserError("Session", "threads", "must be >= 1");
  if (options.max_shapes < 1) throw UserError("Session", "max_shapes", "must be >= 1");
  // A Plan read by load_plan was checked already; one made or edited in memory is checked here
  // (at a shape between a set's buckets, read_plan_file checked all the binding that applies).
  if (plan.bucket_exact) check_plan_binding(plan, model.graph(), plan_file(plan));
  if (auto cycle = partition_cycle(plan, model.graph()))
    throw UserError(plan_file(plan), "partitions", "the partitions form a cycle (" + *cycle + ")");
  for (const Partition& p : plan.partitions) {
    if (p.nodes.size() != model.graph().num_nodes())
      throw UserError(plan_file(plan), "partitions",
                      "the plan was read against another model (" + std::to_string(p.nodes.size()) +
                          " nodes, this model has " + std::to_string(model.graph().num_nodes()) + ")");
  }
  if (auto mismatch = plan_machine_mismatch(plan, options.threads, plan_file(plan)))
    std::fprintf(stderr, "tessera: warning: %s\n", mismatch->render(library_spelling).c_str());
  std::unique_ptr<Bound> own = bind(model, plan);
  own_ = own.get();
  bound_.emplace(shapes_of(inputs_), std::move(own));
  if (options.compile_ahead && plan.shape_set) {
    const PlanSet& set = *plan.shape_set;
    for (size_t b = 0; b < set.buckets.size(); ++b) {
      const std::map<std::string, Shape> binding = set.binding(b, {});
      std::vector<Shape> shapes;
      for (const TensorInfo& in : inputs_) shapes.push_back(binding.count(in.name) ? binding.at(in.name) : in.type.shape);
      bound_at(shapes);
    }
  }
}

Session::~Session() = default;

std::unique_ptr<Session::Bound> Session::bind(const Model& model, const Plan& plan) const {
  for (const std::string& note : check_plan_backends(plan, model.graph(), plan_file(plan), options_.allow_fallback))
    std::fprintf(stderr, "tessera: warning: %s\n", note.c_str());
  set_compute_threads(options_.threads);
  ExecutorOptions eo;
  eo.seed = options_.seed;
  auto bound = std::make_unique<Bound>(Bound{model, plan, nullptr, model.outputs()});
  bound->executor = std::make_unique<Executor>(bound->model.graph(), bound->plan, eo);
  return bound;
}

Session::Bound& Session::bound_at(const std::vector<Shape>& input_shapes) {
  if (auto it = bound_.find(input_shapes); it != bound_.end()) {
    it->second->last_used = ++runs_;
    return *it->second;
  }
  const Plan& plan = own_->plan;
  const std::string file = plan_file(plan);
  if (input_shapes.size() != inputs_.size())
    throw UserError(model_.path(), "inputs", std::to_string(input_shapes.size()) + " input shapes, the model has " +
                                                 std::to_string(inputs_.size()) + " inputs");
  std::map<std::string, Shape> binding;
  for (size_t i = 0; i < inputs_.size(); ++i) binding[inputs_[i].name] = input_shapes[i];
  if (!plan.shape_set) {
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (input_shapes[i] != inputs_[i].type.shape)
        throw UserError::mentioning(model_.path(), inputs_[i].name,
                                    "input has shape " + shape_to_string(input_shapes[i]) + ", the plan " + file +
                                        " was made for " + shape_to_string(inputs_[i].type.shape) +
                                        " only (a plan made over " + mention("shape_ranges") + " runs a range of shapes)");
  }
  // The bucket first, so that a shape outside the ranges is refused before the model is loaded again.
  InputShapes named;
  for (size_t i = 0; i < inputs_.size(); ++i) named.emplace_back(inputs_[i].name, input_shapes[i]);
  plan.shape_set->choose(named);
  Model model = model_.with_input_shapes(binding);
  Plan at = plan_from_json(plan.shape_set->file, file, model.graph());
  at.model = plan.model;
  std::unique_ptr<Bound> bound = bind(model, at);
  bound->last_used = ++runs_;
  Bound& ref = *bound;
  bound_.emplace(input_shapes, std::move(bound));
  drop_least_recent(&ref);
  return ref;
}

void Session::drop_least_recent(const Bound* keep) {
  while (bound_.size() > static_cast<size_t>(options_.max_shapes) && bound_.size() > 2) {
    auto oldest = bound_.end();
    for (auto it = bound_.begin(); it != bound_.end(); ++it)
      if (it->second.get() != own_ && it->second.get() != keep &&
          (oldest == bound_.end() || it->second->last_used < oldest->second->last_used))
        oldest = it;
    bound_.erase(oldest);
  }
}

const std::vector<TensorInfo>& Session::outputs_at(const std::vector<Shape>& input_shapes) {
  return bound_at(input_shapes).outputs;
}

const Plan& Session::plan_at(const std::vector<Shape>& input_shapes) { return bound_at(input_shapes).plan; }

void Session::run(std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs) {
  Bound* bound = own_;
  // The model's own shapes, the usual case, cost no allocation; other shapes a map lookup.
  bool own = inputs.size() == inputs_.size();
  for (size_t i = 0; own && i < inputs.size(); ++i) own = inputs[i].type.shape == inputs_[i].type.shape;
  if (!own && inputs.size() == inputs_.size()) {
    std::vector<Shape> shapes;
    for (const ConstTensorView& v : inputs) shapes.push_back(v.type.shape);
    bound = &bound_at(shapes);
  }
  set_compute_threads(options_.threads);
  bound->executor->run(inputs, outputs);
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
  std::vector<Shape> shapes;
  for (const ConstTensorView& v : in) shapes.push_back(v.type.shape);
  const std::vector<TensorInfo>& outs = outputs_at(shapes);
  std::map<std::string, HostTensor> out;
  std::vector<TensorView> views;
  std::vector<HostTensor> owned;
  owned.reserve(outs.size());
  for (const TensorInfo& info : outs) {
    owned.emplace_back(info.type);
    views.push_back(owned.back().view());
  }
  run(in, views);
  for (size_t i = 0; i < outs.size(); ++i) out[outs[i].name] = std::move(owned[i]);
  return out;
}

std::vector<CallProfile> Session::profile(const std::map<std::string, HostTensor>& inputs, int repeat) {
  if (repeat < 1) throw UserError("Session", "repeat", "must be >= 1");
  std::vector<ConstTensorView> views = ordered(inputs);
  std::vector<Shape> shapes;
  for (const ConstTensorView& v : views) shapes.push_back(v.type.shape);
  Bound& bound = bound_at(shapes);
  const std::vector<TensorInfo> expected = bound.model.inputs();
  std::vector<HostTensor> in;
  for (size_t i = 0; i < views.size(); ++i) {
    if (views[i].type != expected[i].type)
      throw UserError(model_.path(), expected[i].name,
                      "input has type " + to_string(views[i].type) + ", expected " + to_string(expected[i].type));
    in.push_back(inputs.at(expected[i].name));
  }
  set_compute_threads(options_.threads);
  std::vector<CallProfile> calls = profile_calls(*bound.executor, in, repeat);
  attach_plan_costs(calls, *bound.executor, bound.plan);
  return calls;
}

double Session::compile_ms() const {
  double ms = 0;
  for (const auto& [shapes, bound] : bound_) ms += bound->executor->compile_ms();
  return ms;
}
const std::vector<std::string>& Session::codegen_skipped() const { return own_->executor->codegen_skipped(); }

}  // namespace tessera
