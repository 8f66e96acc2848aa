// The Python module `tessera` (docs/design.md, "Python API"), for Debian's /usr/bin/python3:
//
//   model = tessera.Model("m.onnx", input_shapes={"x": (1, 3, 224, 224)})
//   plan = tessera.partition(model, backends=["ref", "onednn"], cost="roofline")
//   plan = tessera.tune(model, backends=[...], cache="costs.db")       # measured costs
//   plan = tessera.tune(model, backends=["ref", "onednn", "onednn_bf16"], max_rel_error=0.01,
//                       calibration={"x": array})                       # bf16 under a budget
//   plan = tessera.tune(model, backends=["ref", "onednn", "onednn_int8"], max_rel_error=0.01,
//                       calibration={"x": "cal.npy"}, calibration_ranges="minmax")   # int8, as the CLI
//   plan.save("plan.json"); plan = tessera.Plan.load("plan.json")
//   session = tessera.Session(model, plan, threads=1)
//   outputs = session.run({"x": array})                                 # {name: ndarray}
//   session.profile({"x": array})       # per call: predicted vs measured ms (tessera run --profile)
//   plan = tessera.tune(model, backends=[...], shape_ranges={"x": ((1, 16), (1, 128), (1, 512))})
//   tessera.Session(model, plan).run({"x": any array inside the range})   # one plan, many shapes
//   tessera.bench(model, ["ref", "ref,onednn"])   # per combination: predicted, measured (tessera bench)
//
// Each class wraps the C++ deployment API (include/tessera/session.h) and the tuning pipeline
// (include/tessera/tune.h) every CLI command runs, so a plan made here is byte-identical to the
// CLI's for the same options and cost database: tessera.tune is `tessera tune` (search, measured
// wholes, the end-to-end race, in-plan prices), tessera.partition(cost="measure") is
// `tessera partition --cost measure`, which runs the same pipeline. A Plan is held as its tessera.plan JSON: Plan.load needs no model,
// and the plan is bound to a model only when a Session is built, which is where a plan for another
// model or other input shapes is refused (plan.h: check_plan_binding).
//
// numpy: inputs are passed to the executor without a copy when they are C-contiguous and of the
// input's dtype; a wider dtype of the same kind (float64 for float32) is converted, others
// (int32, bool, float16 for float32) are refused. Outputs are fresh arrays the session writes into directly (owned by Python).
//
// Errors: a UserError becomes tessera.Error with the CLI's one-line message, the options it
// mentions spelt as this module's keyword arguments (python_spelling); any other C++
// exception too, prefixed "internal error: " as the CLI prints it. The GIL is released while
// partitioning, tuning, compiling and running.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include "py_convert.h"
#include "search/partitioner.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_database.h"
#include "tessera/cost_model.h"
#include "tessera/error.h"
#include "cost_models/measure/measured_cost_model.h"
#include "runtime/model_data.h"
#include "runtime/npy.h"
#include "tessera/session.h"
#include "search/shape_range.h"
#include "search/steering.h"
#include "search/why_not.h"
#include "tessera/tune.h"
#include "tune/tune_buckets.h"
#include "tune/bench.h"
#include "search/search_kind.h"

namespace py = pybind11;

namespace tessera::python {
namespace {

// A plan as its JSON text (saved verbatim, so a saved plan is byte-identical to the CLI's) and
// parsed, with the file or model it came from for messages.
struct PyPlan {
  std::string text;
  nlohmann::json json;
  std::string source;
  std::optional<std::string> why;   // the answers to why= (the CLI's --why), when asked
};

PyPlan plan_from_text(std::string text, const std::string& source) {
  nlohmann::json j = parse_plan_text(text, source);
  return {std::move(text), std::move(j), source, std::nullopt};
}

std::vector<std::string> backend_names(const py::object& backends) {
  if (py::isinstance<py::str>(backends)) return split_backend_list(backends.cast<std::string>());
  std::vector<std::string> names;
  for (const auto& b : backends) names.push_back(py::str(b).cast<std::string>());
  if (names.empty()) throw UserError("backends", "", "no backends given");
  return names;
}

// The accuracy budget of partition/tune/bench (CLI: --max-rel-error, --calibration,
// --calibration-ranges): `calibration` maps input names to arrays (converted to the input's dtype
// as Session.run converts them) or to .npy file paths (as the CLI's NAME=FILE.npy);
// `calibration_ranges` is "minmax" or "percentile:<p>".
AccuracyBudget make_budget(const Model& model, double max_rel_error, const py::object& calibration,
                           const std::string& calibration_ranges) {
  AccuracyBudget budget;
  budget.max_rel_error = max_rel_error;
  budget.calibration_ranges = calibration_ranges;
  if (calibration_ranges != AccuracyBudget{}.calibration_ranges && !max_rel_error)
    throw UserError::option("calibration_ranges", calibration_ranges, "only means something with max_rel_error > 0");
  if (calibration.is_none()) return budget;
  if (!max_rel_error) throw UserError::option("calibration", "", "only means something with max_rel_error > 0");
  if (!py::isinstance<py::dict>(calibration))
    throw UserError::option("calibration", "", "expected a dict {input name: array or .npy path}");
  const std::vector<TensorInfo> inputs = model.inputs();   // a copy: keep it alive while `input` points into it
  for (const auto& item : calibration.cast<py::dict>()) {
    const std::string name = py::str(item.first).cast<std::string>();
    const TensorInfo* input = nullptr;
    for (const TensorInfo& t : inputs)
      if (t.name == name) input = &t;
    if (!input) throw UserError::option("calibration", name, "the model " + model.path() + " has no input of this name");
    if (py::isinstance<py::str>(item.second)) {   // a .npy file, as the CLI reads it
      budget.calibration.emplace(name, read_npy(item.second.cast<std::string>()));
      continue;
    }
    py::array a = as_input_array(item.second, *input, model.path());
    HostTensor t(TensorType{input->type.dtype, array_shape(a)});
    std::memcpy(t.bytes.data(), a.data(), t.bytes.size());
    budget.calibration.emplace(name, std::move(t));
  }
  return budget;
}

// pin= / forbid= (CLI: --pin, --forbid): "SELECTOR=BACKEND", a list of them, or {SELECTOR: BACKEND}.
void add_steering(std::vector<SteeringRule>& out, SteeringRule::Kind kind, const py::object& arg) {
  if (arg.is_none()) return;
  if (py::isinstance<py::str>(arg)) {
    out.push_back(parse_steering_rule(kind, arg.cast<std::string>()));
  } else if (py::isinstance<py::dict>(arg)) {
    for (const auto& item : arg.cast<py::dict>())
      out.push_back(parse_steering_rule(kind, py::str(item.first).cast<std::string>() + "=" + py::str(item.second).cast<std::string>()));
  } else {
    for (const auto& s : arg) out.push_back(parse_steering_rule(kind, py::str(s).cast<std::string>()));
  }
}

std::vector<SteeringRule> steering_rules(const py::object& pin, const py::object& forbid) {
  std::vector<SteeringRule> rules;
  add_steering(rules, SteeringRule::Kind::pin, pin);
  add_steering(rules, SteeringRule::Kind::forbid, forbid);
  return rules;
}

// "1x16x256" from a shape tuple, or the text as given.
std::string shape_text(const py::handle& shape) {
  if (py::isinstance<py::str>(shape)) return shape.cast<std::string>();
  std::string out;
  for (const auto& d : shape) out += (out.empty() ? "" : "x") + std::to_string(d.cast<int64_t>());
  return out;
}

// Texts such as the CLI's flags take: a str, a list of str, or {NAME: value} with `value` turned
// into the text after "NAME=" by `format`.
template <typename Format>
std::vector<std::string> flag_texts(const py::object& arg, Format format) {
  std::vector<std::string> out;
  if (arg.is_none()) return out;
  if (py::isinstance<py::str>(arg)) return {arg.cast<std::string>()};
  if (py::isinstance<py::dict>(arg)) {
    for (const auto& item : arg.cast<py::dict>()) out.push_back(py::str(item.first).cast<std::string>() + "=" + format(item.second));
    return out;
  }
  for (const auto& t : arg) out.push_back(py::str(t).cast<std::string>());
  return out;
}

// shape_ranges= (--shape-range): {"x": (MIN, OPT, MAX)} with shapes as tuples or "1x16" text,
// {"x": "1x16:1x128:1x512"}, or "x=1x16:1x128:1x512" texts; shapes= (--shapes): {"x": [S1, S2, ...]}
// or "x=S1,S2" texts. None when neither is given.
std::optional<ShapeBuckets> shape_buckets(const py::object& ranges_arg, const py::object& shapes_arg) {
  std::vector<ShapeRange> ranges;
  for (const std::string& t : flag_texts(ranges_arg, [](const py::handle& v) {
         if (py::isinstance<py::str>(v)) return v.cast<std::string>();
         std::string out;
         for (const auto& s : v) out += (out.empty() ? "" : ":") + shape_text(s);
         return out;
       }))
    ranges.push_back(parse_shape_range(t, "shape_ranges"));
  const std::vector<std::string> lists = flag_texts(shapes_arg, [](const py::handle& v) {
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ",") + shape_text(s);
    return out;
  });
  if (ranges.empty() && lists.empty()) return std::nullopt;
  return make_shape_buckets(std::move(ranges), lists, "shapes");
}

// tessera.partition and tessera.tune: the tuning pipeline (tune.h), as the CLI runs it; with
// shape ranges once per bucket, into one plan file.
PyPlan make_plan(const Model& model, const py::object& backends_arg, const std::string& cost_arg,
                 const std::string& search, const std::vector<std::string>& specs,
                 const std::optional<std::string>& cache, int jobs, int threads, bool coalesce, bool verify,
                 double max_rel_error, const py::object& calibration, const std::string& calibration_ranges,
                 const std::vector<SteeringRule>& steering, const py::object& why_arg, const std::optional<ShapeBuckets>& buckets, const std::string& bucket_tune) {
  if (bucket_tune != "anchors" && bucket_tune != "all")
    throw UserError("bucket_tune", bucket_tune, "expected \"anchors\" or \"all\"");
  std::vector<std::string> names = backend_names(backends_arg);
  const AccuracyBudget budget = make_budget(model, max_rel_error, calibration, calibration_ranges);
  if (jobs < 1) throw UserError("jobs", std::to_string(jobs), "must be at least 1");
  if (threads < 1) throw UserError("threads", std::to_string(threads), "must be at least 1");
  // why= as the CLI's --why: "NODE[=BACKEND]" or a list of them (read while the GIL is held).
  std::vector<std::string> why_texts;
  if (py::isinstance<py::str>(why_arg)) why_texts.push_back(why_arg.cast<std::string>());
  else
    for (const auto& w : why_arg) why_texts.push_back(py::str(w).cast<std::string>());
  py::gil_scoped_release release;
  SearchKind::parse_or_throw(search);
  std::vector<BackendSpec> backends = resolve_backends(backends_for_search(names, search), specs);
  const std::string cost = cost_arg.empty() ? default_cost_spec(backends) : cost_arg;
  // Measured costs as `tessera tune --threads T` measures them (the same database keys).
  std::unique_ptr<CostModel> cost_model = make_tuning_cost_model(cost, threads);
  std::unique_ptr<CostDatabase> db;
  if (cache) db = CostDatabase::open(*cache);
  else if (cost_model->measures()) db = CostDatabase::open(default_cost_database_path());
  TuneOptions options;
  options.model_path = model.path();
  options.search = search;
  options.jobs = jobs;
  options.threads = threads;
  options.coalesce = coalesce;
  options.verify = verify;
  options.budget = budget;
  options.steering = steering;
  std::vector<WhyQuery> why;   // checked before anything is measured
  for (const std::string& w : why_texts) why.push_back(parse_why(w, model.graph(), backends));
  if (buckets) {
    std::vector<Model> bound;
    std::vector<const Graph*> graphs;
    for (size_t b = 0; b < buckets->buckets.size(); ++b)
      bound.push_back(model.with_input_shapes({buckets->buckets[b].begin(), buckets->buckets[b].end()}));
    for (const Model& m : bound) graphs.push_back(&m.graph());
    const std::vector<TunedPlan> all =
        tune_buckets(graphs, *buckets, backends, *cost_model, db.get(), options, bucket_tune == "anchors").plans;
    std::vector<TunedBucket> tb;
    for (size_t b = 0; b < all.size(); ++b) tb.push_back({buckets->buckets[b], &all[b].plan, &bound[b].graph()});
    return plan_from_text(plan_set_to_json_text(buckets->ranges, tb, buckets->primary), model.path());
  }
  const TunedPlan tuned = tune_graph(model.graph(), backends, *cost_model, db.get(), options);
  PyPlan plan = plan_from_text(plan_to_json_text(tuned.plan, model.graph()), model.path());
  if (!why.empty()) {
    const Steering resolved = Steering::resolve(model.graph(), backends, steering, model.path());
    plan.why = "";
    for (const WhyQuery& q : why) *plan.why += explain_why(*tuned.search, model.graph(), backends, resolved, q);
  }
  return plan;
}

py::object plan_field(const PyPlan& p, const char* key) {
  return p.json.contains(key) ? json_to_python(p.json[key]) : py::none();
}

py::list plan_partitions(const PyPlan& p) {
  py::list out;
  if (!p.json.contains("partitions")) return out;
  for (const auto& part : p.json["partitions"]) {
    py::dict d;
    for (const char* key : {"backend", "nodes", "cost", "function"})
      d[key] = part.contains(key) ? json_to_python(part[key]) : py::none();
    out.append(d);
  }
  return out;
}

py::list tensor_infos(const std::vector<TensorInfo>& infos) {
  py::list out;
  for (const TensorInfo& t : infos) out.append(py::make_tuple(t.name, shape_tuple(t.type.shape), numpy_dtype_name(t.type.dtype)));
  return out;
}

struct PySession {
  std::unique_ptr<Session> session;

  py::dict run(const py::dict& inputs) {
    const std::vector<TensorInfo>& ins = session->inputs();
    std::vector<py::array> keep;   // arrays (possibly converted) alive during the run
    std::vector<ConstTensorView> views;
    for (const auto& item : inputs) {
      const std::string name = py::str(item.first).cast<std::string>();
      bool known = false;
      for (const TensorInfo& t : ins) known |= t.name == name;
      if (!known) throw UserError(session_model_path(), name, "the model has no input of this name");
    }
    for (const TensorInfo& t : ins) {
      if (!inputs.contains(t.name)) throw UserError(session_model_path(), t.name, "input missing");
      keep.push_back(as_input_array(py::object(inputs[py::str(t.name)]), t, session_model_path()));
      views.emplace_back(TensorType{t.type.dtype, array_shape(keep.back())}, keep.back().data());
    }
    std::vector<Shape> shapes;
    for (const ConstTensorView& v : views) shapes.push_back(v.type.shape);
    const std::vector<TensorInfo>* infos = nullptr;
    {
      py::gil_scoped_release release;   // new shapes of a plan over shape ranges compile here
      infos = &session->outputs_at(shapes);
    }
    std::vector<py::array> outs;
    std::vector<TensorView> out_views;
    for (const TensorInfo& t : *infos) {
      outs.push_back(new_array(t.type));
      out_views.push_back(TensorView{t.type, outs.back().mutable_data()});
    }
    {
      py::gil_scoped_release release;
      session->run(views, out_views);
    }
    py::dict result;
    for (size_t i = 0; i < outs.size(); ++i) result[py::str((*infos)[i].name)] = outs[i];
    return result;
  }

  // Per call of the plan's main: measured beside predicted (Session::profile, `run --profile`).
  // Inputs not given are seeded random, as the CLI's.
  py::list profile(const py::object& inputs, int repeat) {
    const std::map<std::string, HostTensor> given = host_inputs(inputs);
    std::vector<CallProfile> calls;
    {
      py::gil_scoped_release release;
      std::map<std::string, HostTensor> named = given;
      if (given.size() != session->inputs().size()) {   // the rest seeded, at the model's own shapes
        const std::vector<HostTensor> all = model_inputs(model->graph(), 0, given);
        for (size_t i = 0; i < all.size(); ++i) named.emplace(session->inputs()[i].name, all[i]);
      }
      calls = session->profile(named, repeat);
    }
    py::list out;
    for (const CallProfile& c : calls) {
      py::dict d;
      d["call"] = c.label;
      d["kernel"] = c.kernel;
      d["backend"] = c.backend.empty() ? py::object(py::none()) : py::object(py::str(c.backend));
      d["partition"] = c.partition < 0 ? py::object(py::none()) : py::object(py::int_(c.partition));
      d["nodes"] = c.nodes;
      d["predicted_ms"] = c.predicted_ms < 0 ? py::object(py::none()) : py::object(py::float_(c.predicted_ms));
      d["measured_ms"] = c.median_ms;
      out.append(d);
    }
    return out;
  }

  // {name: array} as HostTensors of the inputs' types (converted as run() converts them).
  std::map<std::string, HostTensor> host_inputs(const py::object& inputs) const {
    std::map<std::string, HostTensor> out;
    if (inputs.is_none()) return out;
    for (const auto& item : inputs.cast<py::dict>()) {
      const std::string name = py::str(item.first).cast<std::string>();
      const TensorInfo* input = nullptr;
      for (const TensorInfo& t : session->inputs())
        if (t.name == name) input = &t;
      if (!input) throw UserError(model_path, name, "the model has no input of this name");
      py::array a = as_input_array(item.second, *input, model_path);
      HostTensor t(TensorType{input->type.dtype, array_shape(a)});
      std::memcpy(t.bytes.data(), a.data(), t.bytes.size());
      out.emplace(name, std::move(t));
    }
    return out;
  }

  std::optional<Model> model;   // set once built (Model has no empty state)
  std::string model_path;
  const std::string& session_model_path() const { return model_path; }
};

// tessera bench: per backend combination, the plan's predicted cost and measured latency
// (src/tune/bench.h, the CLI's code: each combination tuned as tessera.tune tunes it), on seeded inputs.
py::list bench(const Model& model, const py::list& combos, const std::string& cost, const std::string& search, int repeat,
               int threads, const std::optional<std::string>& cache, bool coalesce, double max_rel_error,
               const py::object& calibration, const std::string& calibration_ranges, const py::object& pin,
               const py::object& forbid, const py::object& shape_ranges, const py::object& shapes) {
  const std::vector<SteeringRule> steering = steering_rules(pin, forbid);
  // With shape ranges, every bucket benched at its own shapes (the CLI's bench --shape-range).
  const std::optional<ShapeBuckets> buckets = shape_buckets(shape_ranges, shapes);
  std::vector<std::vector<std::string>> lists;
  for (const auto& c : combos) lists.push_back(backend_names(py::reinterpret_borrow<py::object>(c)));
  if (lists.empty()) throw UserError("combos", "", "give at least one backend combination, e.g. [\"ref\", \"ref,onednn\"]");
  if (repeat < 1) throw UserError("repeat", "", "must be >= 1");
  if (threads < 1) throw UserError("threads", "", "must be >= 1");
  BenchOptions options;
  options.tune.budget = make_budget(model, max_rel_error, calibration, calibration_ranges);
  std::vector<std::pair<std::string, BenchRow>> rows;   // (the bucket's shapes or "", row)
  {
    py::gil_scoped_release release;
    set_compute_threads(threads);
    std::vector<BackendSpec> all;   // every backend named, for the default cost model
    for (const auto& names : lists)
      for (BackendSpec& b : resolve_backends(names, {})) all.push_back(std::move(b));
    const std::string spec = cost.empty() ? default_cost_spec(all) : cost;
    std::unique_ptr<CostModel> cost_model = make_tuning_cost_model(spec, threads);
    std::unique_ptr<CostDatabase> db;
    if (cache) db = CostDatabase::open(*cache);
    else if (cost_model->measures()) db = CostDatabase::open(default_cost_database_path());
    options.tune.model_path = model.path();
    options.tune.search = search;
    options.tune.threads = threads;
    options.tune.coalesce = coalesce;
    options.tune.steering = steering;
    std::vector<Model> bound;
    for (size_t b = 0; b < (buckets ? buckets->buckets.size() : 1); ++b)
      bound.push_back(buckets ? model.with_input_shapes({buckets->buckets[b].begin(), buckets->buckets[b].end()}) : model);
    for (const Model& m : bound) Steering::resolve(m.graph(), all, steering, model.path());   // before anything is measured
    options.repeat = repeat;
    options.database = db.get();
    for (size_t b = 0; b < bound.size(); ++b) {
      const std::vector<HostTensor> inputs = model_inputs(bound[b].graph(), 0);
      for (BenchRow& r : bench_combinations(bound[b].graph(), inputs, lists, *cost_model, options))
        rows.emplace_back(buckets ? input_shapes_text(buckets->buckets[b]) : "", std::move(r));
    }
  }
  py::list out;
  auto value = [](const std::optional<double>& v) { return v ? py::object(py::float_(*v)) : py::object(py::none()); };
  for (const auto& [shapes, r] : rows) {
    py::dict d;
    if (buckets) d["input_shapes"] = shapes;
    d["backends"] = r.backends;
    d["predicted_ms"] = value(r.predicted_ms);
    d["measured_ms"] = value(r.measured_ms);
    d["predicted_over_measured"] = value(predicted_over_measured(r));
    d["clock"] = r.clock.empty() ? py::object(py::none()) : py::object(py::str(r.clock));
    d["rel_error"] = value(r.rel_error);
    d["error"] = r.error.empty() ? py::object(py::none()) : py::object(py::str(r.error));
    out.append(d);
  }
  return out;
}

}  // namespace
// An option mention (tessera/error.h) as Python writes it: the keyword argument, with its
// bindings as the dict it takes: input_shapes={"x": (1, 3, 224, 224)}.
std::string python_spelling(const OptionMention& mention) {
  if (mention.bindings.empty()) return mention.option;
  std::string out = mention.option + "={";
  for (size_t b = 0; b < mention.bindings.size(); ++b) {
    const auto& [name, dims] = mention.bindings[b];
    out += (b ? ", \"" : "\"") + name + "\": (";
    if (dims.empty()) out += "...";
    for (size_t i = 0; i < dims.size(); ++i) out.append(i ? ", " : "").append(std::to_string(dims[i]));
    out += dims.size() == 1 ? ",)" : ")";
  }
  return out + "}";
}

}  // namespace tessera::python

PYBIND11_MODULE(tessera, m) {
  using namespace tessera;
  using namespace tessera::python;
  m.doc() = "tessera: search-based partition optimizer for neural networks (docs/design.md, Python API)";

  static py::exception<UserError> error(m, "Error", PyExc_Exception);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UserError& e) {
      PyErr_SetString(error.ptr(), e.message(python_spelling).c_str());
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::exception& e) {
      PyErr_SetString(error.ptr(), (std::string("internal error: ") + e.what()).c_str());
    }
  });

  py::class_<Model>(m, "Model", "a model (.onnx or tessera .json), with symbolic input dimensions bound")
      .def(py::init([](const std::string& path, const py::object& input_shapes, bool verbose) {
             std::map<std::string, Shape> shapes = parse_input_shapes(input_shapes);
             py::gil_scoped_release release;
             return Model::load(path, shapes, verbose, python_spelling);
           }),
           py::arg("path"), py::arg("input_shapes") = py::none(), py::arg("verbose") = false,
           "import warnings go to stderr; weights missing from disk as one line (each of them with verbose=True)")
      .def_property_readonly("path", &Model::path)
      .def_property_readonly("inputs", [](const Model& mo) { return tensor_infos(mo.inputs()); },
                             "list of (name, shape tuple, dtype string)")
      .def_property_readonly("outputs", [](const Model& mo) { return tensor_infos(mo.outputs()); })
      .def_property_readonly("fingerprint", &Model::fingerprint, "what a plan for this model records")
      .def_property_readonly("num_nodes", [](const Model& mo) { return mo.graph().num_nodes(); })
      .def("__repr__", [](const Model& mo) {
        return "<tessera.Model " + mo.path() + ": " + std::to_string(mo.graph().num_nodes()) + " nodes>";
      });

  py::class_<PyPlan>(m, "Plan", "a tessera.plan: which backend runs which nodes")
      .def_static("load", [](const std::string& path) { return plan_from_text(read_text_file(path), path); }, py::arg("path"))
      .def("save", [](const PyPlan& p, const std::string& path) { write_text_file(path, p.text); },
           py::arg("path"))
      .def_property_readonly("partitions", &plan_partitions, "list of {backend, nodes, cost, function}")
      .def_property_readonly("total_cost", [](const PyPlan& p) { return plan_field(p, "total_cost"); })
      .def_property_readonly("transfer_cost", [](const PyPlan& p) { return plan_field(p, "transfer_cost"); })
      .def_property_readonly("model", [](const PyPlan& p) { return plan_field(p, "model"); })
      .def_property_readonly("search", [](const PyPlan& p) { return plan_field(p, "search"); })
      .def_property_readonly("cost_model", [](const PyPlan& p) { return plan_field(p, "cost_model"); })
      .def_property_readonly("model_fingerprint", [](const PyPlan& p) { return plan_field(p, "model_fingerprint"); })
      .def_property_readonly("input_shapes", [](const PyPlan& p) { return plan_field(p, "input_shapes"); })
      .def_property_readonly("accuracy", [](const PyPlan& p) { return plan_field(p, "accuracy"); },
                             "{max_rel_error, calibration, verified_error, proxy_error, rounds}, or None (fp32 plan)")
      .def_property_readonly("steering", [](const PyPlan& p) { return plan_field(p, "steering"); },
                             "the pins and forbids the plan obeyed: [{kind, selector, backend, nodes}], or None")
      .def_property_readonly("tuned_on", [](const PyPlan& p) { return plan_field(p, "tuned_on"); },
                             "{threads, cpu, machine} of a plan priced by measurement, or None")
      .def_property_readonly("why", [](const PyPlan& p) { return p.why; },
                             "the answers to why=[\"NODE[=BACKEND]\", ...] (the CLI's --why), or None when not asked")
      .def_property_readonly("json", [](const PyPlan& p) { return json_to_python(p.json); }, "the whole plan as a dict")
      .def("to_json", [](const PyPlan& p) { return p.text; }, "the plan file's text")
      .def_property_readonly("shape_ranges", [](const PyPlan& p) { return plan_field(p, "shape_ranges"); },
                             "a plan over shape ranges: [{input, min, opt, max}]; None for a plan for one shape")
      .def_property_readonly("buckets", [](const PyPlan& p) { return plan_field(p, "buckets"); },
                             "a plan over shape ranges: [{input_shapes, plan, total_cost}]; None for a plan for one shape")
      .def("backends", [](const PyPlan& p) {
        std::map<std::string, int> n;
        for (const auto& part : p.json.value("partitions", nlohmann::json::array())) ++n[part.value("backend", "")];
        return n;
      }, "partitions per backend")
      .def("__repr__", [](const PyPlan& p) {
        return "<tessera.Plan " + p.source + ": " + std::to_string(p.json.value("partitions", nlohmann::json::array()).size()) +
               " partitions>";
      });

  m.def("partition",
        [](const Model& model, const py::object& backends, const std::string& cost, const std::string& search,
           const std::vector<std::string>& specs, const std::optional<std::string>& cache, int jobs, int threads,
           bool coalesce, bool verify, double max_rel_error, const py::object& calibration,
           const std::string& calibration_ranges, const py::object& pin, const py::object& forbid, const py::object& why,
           const py::object& shape_ranges, const py::object& shapes, const std::string& bucket_tune) {
          return make_plan(model, backends, cost, search, specs, cache, jobs, threads, coalesce, verify, max_rel_error,
                           calibration, calibration_ranges, steering_rules(pin, forbid), why, shape_buckets(shape_ranges, shapes),
                           bucket_tune);
        },
        "the cheapest acyclic partition plan (tessera partition; with cost=\"measure\" tuned as tessera.tune)",
        py::arg("model"), py::arg("backends"), py::arg("cost") = "", py::arg("search") = "collage",
        py::arg("backend_specs") = std::vector<std::string>{}, py::arg("cache") = py::none(), py::arg("jobs") = 1,
        py::arg("threads") = 1, py::arg("coalesce") = true, py::arg("verify") = true, py::arg("max_rel_error") = 0.0,
        py::arg("calibration") = py::none(), py::arg("calibration_ranges") = "minmax", py::arg("pin") = py::none(), py::arg("forbid") = py::none(),
        py::arg("why") = py::list(), py::arg("shape_ranges") = py::none(), py::arg("shapes") = py::none(),
        py::arg("bucket_tune") = "anchors");
  m.def("tune",
        [](const Model& model, const py::object& backends, const std::optional<std::string>& cache, const std::string& search,
           const std::vector<std::string>& specs, int jobs, int threads, bool verify, double max_rel_error,
           const py::object& calibration, const std::string& calibration_ranges, const py::object& pin,
           const py::object& forbid, const py::object& why, const py::object& shape_ranges, const py::object& shapes,
           const std::string& bucket_tune) {
          return make_plan(model, backends, "measure", search, specs, cache, jobs, threads, true, verify, max_rel_error,
                           calibration, calibration_ranges, steering_rules(pin, forbid), why,
                           shape_buckets(shape_ranges, shapes), bucket_tune);
        },
        "measured costs kept in a cost database, the plan raced end to end against single-backend plans (tessera tune)",
        py::arg("model"), py::arg("backends"), py::arg("cache") = py::none(), py::arg("search") = "collage",
        py::arg("backend_specs") = std::vector<std::string>{}, py::arg("jobs") = 1, py::arg("threads") = 1,
        py::arg("verify") = true, py::arg("max_rel_error") = 0.0, py::arg("calibration") = py::none(),
        py::arg("calibration_ranges") = "minmax", py::arg("pin") = py::none(), py::arg("forbid") = py::none(),
        py::arg("why") = py::list(),
        py::arg("shape_ranges") = py::none(), py::arg("shapes") = py::none(),
        py::arg("bucket_tune") = "anchors");

  py::class_<PySession>(m, "Session", "a model compiled as a plan partitions it, ready to run")
      .def(py::init([](const Model& model, const PyPlan& plan, int threads, uint64_t seed, bool allow_fallback,
                       bool compile_ahead, int max_shapes) {
             Plan parsed = plan_from_json(plan.json, plan.source, model.graph());
             parsed.model = plan.source;   // messages name the plan file
             SessionOptions options;
             options.threads = threads;
             options.seed = seed;
             options.allow_fallback = allow_fallback;
             options.compile_ahead = compile_ahead;
             options.max_shapes = max_shapes;
             py::gil_scoped_release release;
             PySession s;
             s.session = std::make_unique<Session>(model, parsed, options);
             s.model = model;
             s.model_path = model.path();
             return s;
           }),
           py::arg("model"), py::arg("plan"), py::arg("threads") = 1, py::arg("seed") = 0,
           py::arg("allow_fallback") = false, py::arg("compile_ahead") = false,
           py::arg("max_shapes") = SessionOptions{}.max_shapes)
      .def("run", &PySession::run, py::arg("inputs"), "{input name: ndarray} -> {output name: ndarray}")
      .def("profile", &PySession::profile, py::arg("inputs") = py::none(), py::arg("repeat") = 10,
           "per call of the plan (tessera run --profile): list of {call, kernel, backend, partition, nodes, "
           "predicted_ms, measured_ms}; inputs not given are seeded random")
      .def_property_readonly("inputs", [](const PySession& s) { return tensor_infos(s.session->inputs()); })
      .def_property_readonly("outputs", [](const PySession& s) { return tensor_infos(s.session->outputs()); })
      .def_property_readonly("compile_ms", [](const PySession& s) { return s.session->compile_ms(); })
      .def_property_readonly("codegen_skipped", [](const PySession& s) { return s.session->codegen_skipped(); })
      .def_property_readonly("shapes_compiled", [](const PySession& s) { return s.session->shapes_compiled(); },
                             "input shapes compiled so far (a plan over shape ranges compiles each shape once)")
      .def("bucket", [](PySession& s, const py::dict& shapes) {
             std::vector<Shape> in;
             for (const TensorInfo& t : s.session->inputs())
               in.push_back(shapes.contains(t.name) ? Shape(py::cast<std::vector<int64_t>>(shapes[py::str(t.name)])) : t.type.shape);
             const Plan& plan = s.session->plan_at(in);
             py::dict d;
             d["bucket"] = plan.shape_set ? py::object(py::int_(plan.bucket)) : py::object(py::none());
             d["exact"] = plan.bucket_exact;
             d["plan"] = plan.shape_set ? py::object(py::int_(plan.shape_set->buckets[plan.bucket].plan)) : py::object(py::none());
             return d;
           }, py::arg("shapes"),
           "{input name: shape} -> {bucket, plan, exact}: which bucket of a plan over shape ranges runs these shapes "
           "(compiles them when new); exact: they are the bucket's own");

  m.def("bench", &bench, "per backend combination (tessera bench): list of {backends, predicted_ms, measured_ms, "
        "predicted_over_measured, clock ('cpu' at 1 thread, else 'wall'), rel_error, error}; costs measured where every backend runs here; with shape_ranges=/shapes=, per bucket "
        "(each row with its input_shapes)", py::arg("model"), py::arg("combos"), py::arg("cost") = "",
        py::arg("search") = "collage", py::arg("repeat") = 10, py::arg("threads") = 1, py::arg("cache") = py::none(),
        py::arg("coalesce") = true, py::arg("max_rel_error") = 0.0, py::arg("calibration") = py::none(),
        py::arg("calibration_ranges") = "minmax", py::arg("pin") = py::none(), py::arg("forbid") = py::none(),
        py::arg("shape_ranges") = py::none(),
        py::arg("shapes") = py::none());
  m.def("backends", &backend_compiler_names, "the built-in backends that run on this machine");
  m.attr("__version__") = "0.1.0";
}
