// tessera run MODEL --plan PLAN.json [--check] [--repeat N] [--threads T] [--json]
//   [--input NAME=FILE.npy]... [--output-dir DIR] [--seed S] [--dump-ir DIR] [--profile]
//   [--against OTHER.json]...
// (docs/design.md). Builds the executor (src/runtime/executor.h) once, warms up, times
// --repeat runs and reports the median; --check compares with ref (ref_check.h).
// --json prints exactly {"latency_ms": .., "max_abs_error": .. | null, "ok": ..}. --output-dir
// writes each graph output of the last run as DIR/<name>.npy (npy.h: npy_file_name). --against
// races the plan with others in this process (plan_race.h); --json then adds "race", a list of
// {"plan", "latency_ms"} with the plan itself first.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "runtime/plan_backends.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "cli/model_options.h"
#include "cli/plan_race.h"
#include "backends/compilers/backend_compiler.h"
#include "runtime/call_profile.h"
#include "tessera/error.h"
#include "runtime/executor.h"
#include "runtime/latency.h"
#include "runtime/model_data.h"
#include "emit/module_printer.h"
#include "runtime/npy.h"
#include "tessera/plan.h"
#include "search/shape_range.h"
#include "support/plural.h"
#include "runtime/ref_check.h"
#include "support/text.h"

namespace tessera::cli {
namespace {

struct RunArgs {
  ModelOptions model;
  std::string plan_path;
  bool check = false;
  int repeat = 10;
  int threads = 1;
  bool json = false;
  std::vector<std::string> inputs;
  std::string output_dir;
  uint64_t seed = 0;
  std::string dump_dir;
  bool profile = false;
  std::vector<std::string> against;
  bool allow_fallback = false;
  bool each_bucket = false;
};

std::map<std::string, HostTensor> read_inputs(const std::vector<std::string>& specs) {
  std::map<std::string, HostTensor> out;
  for (const std::string& s : specs) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      throw UserError("--input", s, "expected NAME=FILE.npy");
    out[s.substr(0, eq)] = read_npy(s.substr(eq + 1));
  }
  return out;
}

// Per call in main: measured median beside the plan's predicted cost.
std::vector<CallProfile> profile(Executor& executor, const std::vector<HostTensor>& inputs, const Plan& plan, int repeat) {
  std::vector<CallProfile> calls = profile_calls(executor, inputs, repeat);
  attach_plan_costs(calls, executor, plan);
  return calls;
}

// --json --profile: the calls as one list inside the JSON object, so stdout stays one JSON line.
nlohmann::json profile_json(const std::vector<CallProfile>& calls) {
  nlohmann::json list = nlohmann::json::array();
  for (const CallProfile& c : calls)
    list.push_back({{"call", c.label}, {"kernel", c.kernel}, {"backend", c.backend}, {"nodes", c.nodes},
                    {"measured_ms", c.median_ms},
                    {"predicted_ms", c.predicted_ms >= 0 ? nlohmann::json(c.predicted_ms) : nlohmann::json(nullptr)}});
  return list;
}

// The table, then the totals.
void print_profile(const Executor& executor, const std::vector<CallProfile>& calls) {
  double measured = 0, predicted = 0;
  std::printf("%-4s %-8s %-34s %12s %12s  %s\n", "#", "backend", "call", "predicted ms", "measured ms", "nodes");
  for (size_t i = 0; i < calls.size(); ++i) {
    const CallProfile& c = calls[i];
    measured += c.median_ms;
    if (c.predicted_ms >= 0) predicted += c.predicted_ms;
    auto from = executor.module().outlined_from.find(c.label);
    std::string nodes = from == executor.module().outlined_from.end() ? c.label : count_of(from->second.size(), "node") + " from " + from->second.front();
    std::printf("%-4zu %-8s %-34s %12.4f %12.4f  %s\n", i, c.backend.c_str(), c.kernel.substr(0, 34).c_str(), c.predicted_ms,
                c.median_ms, nodes.c_str());
  }
  std::printf("sum of calls: predicted %.3f ms, measured %.3f ms (ratio %.2f)\n", predicted, measured,
              measured > 0 ? predicted / measured : 0.0);
}

// Where a plan over shape ranges put these shapes, in words (nothing for a plan for one shape).
std::optional<std::string> bucket_note(const Plan& plan, const Graph& graph) {
  if (!plan.shape_set) return std::nullopt;
  const PlanSet& set = *plan.shape_set;
  const PlanBucket& b = set.buckets[plan.bucket];
  return "bucket " + std::to_string(plan.bucket) + " of " + std::to_string(set.buckets.size()) + " (" +
         input_shapes_text(b.input_shapes) + ", plan " + std::to_string(b.plan) + " of " + std::to_string(plan_set_plan_count(set)) +
         ")" + (plan.bucket_exact ? "" : ", its plan tuned at " + input_shapes_text(plan.input_shapes) + " compiled at these shapes");
}

// The shapes the model is bound to: --input-shape; else the --input files' shapes (a plan over
// shape ranges runs them), then the plan's own for symbolic dimensions still unbound.
std::vector<std::pair<std::string, Shape>> binding_shapes(const RunArgs& a, const std::map<std::string, HostTensor>& given) {
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& [name, t] : given) shapes.emplace_back(name, t.type.shape);
  for (const auto& [name, shape] : read_plan_input_shapes(a.plan_path))
    if (!given.count(name)) shapes.emplace_back(name, shape);
  return shapes;
}

// --each-bucket: every bucket of a plan over shape ranges at its own shapes, one row each.
void run_each_bucket(const RunArgs& a) {
  Graph probe = a.model.load_for_plan(read_plan_input_shapes(a.plan_path));
  const Plan top = read_plan_file(a.plan_path, probe);
  if (!top.shape_set) throw UserError(a.plan_path, "", "--each-bucket needs a plan made with --shape-range or --shapes");
  const PlanSet& set = *top.shape_set;
  nlohmann::json rows = nlohmann::json::array();
  if (!a.json)
    std::printf("%-6s %-28s %5s %12s %12s %12s %s\n", "bucket", "shapes", "plan", "predicted ms", "measured ms", "compile ms",
                a.check ? "check" : "");
  bool all_ok = true;
  for (size_t b = 0; b < set.buckets.size(); ++b) {
    ModelOptions mo = a.model;
    mo.input_shapes.clear();
    for (const auto& [name, shape] : set.binding(b, model_input_shapes(probe))) mo.input_shapes.push_back(name + "=" + shape_to_string(shape));
    const Graph graph = mo.load();
    const Plan plan = read_plan_file(a.plan_path, graph);
    check_plan_backends(plan, graph, a.plan_path, a.allow_fallback);
    const std::vector<HostTensor> inputs = model_inputs(graph, a.seed);
    ExecutorOptions options;
    options.seed = a.seed;
    Executor executor(graph, plan, options);
    std::optional<CheckReport> report;
    if (a.check) report = check_against_ref(executor, inputs);
    const LatencyStats latency = measure_latency(executor, inputs, a.repeat);
    const double predicted = set.buckets[b].total_cost.is_value() ? set.buckets[b].total_cost.seconds() * 1e3 : -1;
    all_ok &= !report || report->ok;
    rows.push_back({{"bucket", b}, {"input_shapes", input_shapes_text(set.buckets[b].input_shapes)}, {"plan", set.buckets[b].plan},
                    {"predicted_ms", predicted >= 0 ? nlohmann::json(predicted) : nlohmann::json(nullptr)},
                    {"latency_ms", latency.median_ms}, {"compile_ms", executor.compile_ms()},
                    {"max_abs_error", report ? nlohmann::json(report->max_abs_error) : nlohmann::json(nullptr)},
                    {"ok", !report || report->ok}});
    if (!a.json)
      std::printf("%-6zu %-28s %5zu %12.4f %12.4f %12.1f %s\n", b, input_shapes_text(set.buckets[b].input_shapes).c_str(),
                  set.buckets[b].plan, predicted, latency.median_ms, executor.compile_ms(),
                  !report ? "" : report->ok ? "ok" : ("FAILED: " + report->first_failure()).c_str());
  }
  if (a.json) std::printf("%s\n", nlohmann::json{{"buckets", rows}, {"ok", all_ok}}.dump().c_str());
  if (!all_ok) {
    std::fflush(stdout);
    std::exit(1);
  }
}

void run_run(const RunArgs& a) {
  if (a.repeat < 1) throw UserError("--repeat", "", "must be >= 1");
  if (a.threads < 1) throw UserError("--threads", "", "must be >= 1");
  set_compute_threads(a.threads);
  if (a.each_bucket) return run_each_bucket(a);
  const std::map<std::string, HostTensor> given = read_inputs(a.inputs);
  // Symbolic dimensions the user does not bind take the shapes of the --input files, else the
  // shapes the plan was made for.
  Graph graph = a.model.load_for_plan(binding_shapes(a, given));
  Plan plan = read_plan_file(a.plan_path, graph);
  const std::optional<std::string> bucket = bucket_note(plan, graph);
  // An edited or foreign plan: backends this build runs, nodes they take (plan_backends.h).
  for (const std::string& note : check_plan_backends(plan, graph, a.plan_path, a.allow_fallback))
    std::fprintf(stderr, "tessera: warning: %s\n", note.c_str());
  if (auto mismatch = plan_machine_mismatch(plan, a.threads, a.plan_path))
    std::fprintf(stderr, "tessera: warning: %s\n", mismatch->render(cli_spelling).c_str());
  // --against's plans are read before anything runs: a bad one is a usage error at once.
  std::vector<std::pair<std::string, Plan>> against;
  if (!a.against.empty()) {
    against.emplace_back(a.plan_path, plan);
    for (const std::string& path : a.against) {
      against.emplace_back(path, read_plan_file(path, graph));
      check_plan_backends(against.back().second, graph, path, a.allow_fallback);
    }
  }
  std::vector<HostTensor> inputs = model_inputs(graph, a.seed, given);

  ExecutorOptions options;
  options.seed = a.seed;
  int dumped = 0;
  if (!a.dump_dir.empty()) {
    std::filesystem::create_directories(a.dump_dir);
    options.dump = [&](const std::string& step, const Module& m) {
      std::ofstream(std::filesystem::path(a.dump_dir) / (std::to_string(dumped++) + "_" + step + ".txt")) << print_module(m);
    };
  }
  Executor executor(graph, plan, options);
  for (const std::string& s : executor.codegen_skipped())
    std::fprintf(stderr, "tessera: warning: not compiled, runs on ref kernels: %s\n", printable(s).c_str());

  std::optional<CheckReport> report;
  if (a.check) report = check_against_ref(executor, inputs);
  LatencyStats latency = measure_latency(executor, inputs, a.repeat);
  std::vector<RacedPlan> race;
  if (!against.empty()) race = race_plans(graph, against, inputs, a.repeat);

  // A plan made under an accuracy budget is judged end to end against its budget: its reduced-
  // precision partitions are not meant to meet fp32's per-element tolerance.
  const std::optional<PlanAccuracy>& budget = plan.accuracy;
  const bool ok = !report || (budget ? report->max_rel_error <= budget->max_rel_error : report->ok);
  if (!a.output_dir.empty()) {
    std::vector<std::string> names;
    for (ValueId v : graph.outputs) names.push_back(graph.value(v).name);
    write_npy_dir(a.output_dir, names, executor.outputs());
    for (const std::string& n : names) note_written((std::filesystem::path(a.output_dir) / npy_file_name(n)).string());
  }
  const std::vector<CallProfile> calls = a.profile ? profile(executor, inputs, plan, a.repeat) : std::vector<CallProfile>{};
  if (a.json) {
    nlohmann::json j;
    if (a.profile) j["profile"] = profile_json(calls);
    j["latency_ms"] = latency.median_ms;
    j["max_abs_error"] = report ? nlohmann::json(report->max_abs_error) : nlohmann::json(nullptr);
    j["ok"] = ok;
    if (report && budget) j["rel_error"] = report->max_rel_error;
    if (bucket)
      j["bucket"] = {{"index", plan.bucket}, {"input_shapes", input_shapes_text(plan.shape_set->buckets[plan.bucket].input_shapes)},
                     {"exact", plan.bucket_exact}, {"compile_ms", executor.compile_ms()}};
    if (!race.empty()) {
      j["race"] = nlohmann::json::array();
      for (const RacedPlan& r : race) j["race"].push_back({{"plan", r.path}, {"latency_ms", r.latency_ms}});
    }
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: %s, %s (%zu compiled), compile %.1f ms, workspace %.2f MiB\n", a.model.path.c_str(),
                count_of(plan.partitions.size(), "partition").c_str(),
                count_of(executor.module().functions.size(), "function").c_str(), executor.module().external_modules.size(), executor.compile_ms(),
                static_cast<double>(executor.workspace_bytes()) / (1 << 20));
    if (bucket) std::printf("shapes: %s: %s\n", input_shapes_text(model_input_shapes(graph)).c_str(), bucket->c_str());
    std::printf("latency: median %.3f ms (min %.3f, max %.3f) over %d runs, %d thread%s\n", latency.median_ms,
                latency.min_ms, latency.max_ms, a.repeat, a.threads, a.threads == 1 ? "" : "s");
    if (!race.empty()) {
      std::printf("race, %d interleaved rounds, paired with the first plan:\n", kPlanRaceRounds);
      for (const RacedPlan& r : race)
        std::printf("  %-40s %9.3f ms  %.2fx\n", printable(r.path).c_str(), r.latency_ms,
                    race[0].latency_ms > 0 ? r.latency_ms / race[0].latency_ms : 0.0);
    }
    if (report) {
      for (const CheckedValue& v : report->outputs)
        std::printf("check: output %s max abs error %.3g, relative error %.3g %s\n", v.name.c_str(),
                    v.result.max_abs_error, v.result.rel_error, v.result.ok ? "ok" : v.result.reason.c_str());
      int bad = 0;
      for (const CheckedValue& v : report->partitions) bad += v.result.ok ? 0 : 1;
      if (budget)
        std::printf("check: %zu partition outputs compared, %d out of fp32 tolerance; end-to-end relative error %.3g, "
                    "budget %g (verified %.3g on %s): %s\n", report->partitions.size(), bad, report->max_rel_error,
                    budget->max_rel_error, budget->verified_error, budget->calibration.c_str(), ok ? "ok" : "FAILED");
      else
        std::printf("check: %zu partition outputs compared, %d out of tolerance; %s\n", report->partitions.size(), bad,
                    report->ok ? "ok" : ("FAILED: " + report->first_failure()).c_str());
    }
  }
  if (a.profile && !a.json) {
    print_profile(executor, calls);
    if (!plan.bucket_exact)   // between buckets the plan's prices are its bucket's, not these shapes'
      std::printf("predicted: the prices of the plan as tuned at %s, not at these shapes\n",
                  input_shapes_text(plan.input_shapes).c_str());
  }
  if (!ok) {   // a failed check is not a usage error (2): exit 1, after the report
    std::fflush(stdout);
    std::exit(1);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "execute a model as a plan partitions it; time it, check it against ref");
  args->model.add_to(*cmd);
  args->model.runs = true;
  cmd->add_option("--plan", args->plan_path, "the plan (tessera.plan JSON)")->required();
  cmd->add_flag("--check", args->check, "also run every node on ref and compare every output");
  cmd->add_option("--repeat", args->repeat, "timed runs after one warm-up (median reported; default 10)");
  cmd->add_option("--threads", args->threads, "compute threads for every backend (default 1)");
  cmd->add_flag("--json", args->json, "print {\"latency_ms\", \"max_abs_error\", \"ok\"}");
  cmd->add_option("--input", args->inputs, "NAME=FILE.npy: an input from a file (f32/i64; default seeded random)");
  cmd->add_option("--output-dir", args->output_dir, "write each graph output as DIR/<name>.npy (other characters than A-Za-z0-9._- become _)");
  cmd->add_option("--seed", args->seed, "seed of random inputs and of weights the model lacks (default 0)");
  cmd->add_option("--dump-ir", args->dump_dir, "write the module after each pipeline step into this directory");
  cmd->add_option("--against", args->against,
                  "another plan to race this one against in interleaved rounds, as tune does (repeatable)");
  cmd->add_flag("--profile", args->profile,
                "per call in main: measured median beside the plan's predicted cost (with --json: a \"profile\" list)");
  cmd->add_flag("--allow-fallback", args->allow_fallback,
                "run a plan that puts a node on a backend whose spec refuses it (an edited plan): such partitions "
                "run on ref's kernels where the backend cannot compile them, with a warning, instead of exit 2");
  cmd->add_flag("--each-bucket", args->each_bucket,
                "a plan made with --shape-range: run every bucket at its own shapes, one row each (predicted, measured, "
                "compile ms; with --check, checked against ref)");
  cmd->callback([args] { run_run(*args); });
}

}  // namespace tessera::cli
