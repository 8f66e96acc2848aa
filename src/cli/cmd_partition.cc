// tessera partition MODEL --backends a,b,c [--backend-spec FILE]... [--cost MODEL]
//   [--search collage|greedy|single:<backend>|exhaustive] [--plan OUT.json] [--emit DIR]
//   [--cache DB] [-j N] [--no-coalesce] [--no-verify] [--explain] [--timings] [--max-rel-error E]
//   [--calibration N=F.npy]... [--pin SEL=B]... [--forbid SEL=B]... [--why NODE[=BACKEND]]
// (docs/design.md). The pipeline is the tuning pipeline (tessera/tune.h): with mock or roofline costs
// the search alone, with measured costs also the end-to-end race and in-plan prices, exactly as
// `tessera tune` runs them. This file is option glue and output.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "cli/accuracy_options.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "cli/model_options.h"
#include "cli/shape_range_options.h"
#include "cli/steering_options.h"
#include "search/explain.h"
#include "search/why_not.h"
#include "search/partitioner.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_database.h"
#include "search/cost_display.h"
#include "tessera/cost_model.h"
#include "emit/emit_pipeline.h"
#include "runtime/model_data.h"
#include "tessera/error.h"
#include "cost_models/measure/measured_cost_model.h"
#include "tessera/plan.h"
#include "support/plural.h"
#include "search/steering.h"
#include "support/text.h"
#include "tessera/tune.h"
#include "tune/tune_buckets.h"
#include "search/search_kind.h"

namespace tessera::cli {
namespace {

struct PartitionArgs {
  ModelOptions model;
  std::string backends;
  std::vector<std::string> specs;
  std::string cost;
  std::string search = "collage";
  std::string plan_path;
  std::string emit_dir;
  std::string cache;
  int threads = 0;            // -j; 0: one per core, but one measurement at a time (default_jobs)
  int compute_threads = 1;
  bool no_coalesce = false;
  bool explain = false;
  bool timings = false;
  bool no_verify = false;
  size_t search_memory_mb = 0;   // 0: default_search_memory()
  AccuracyOptions accuracy;
  SteeringOptions steering;
  ShapeRangeOptions shape_ranges;
};

// The --emit hook: writes everything under DIR that docs/design.md lists (src/emit/emit_pipeline.h):
// plan.json, module.txt, module.onnx, graph.dot, graph.svg; for an int8 plan qdq.onnx and
// qdq_all.onnx, with the weights the plan was verified with (seeded where the model has none).
void emit_outputs(const std::string& dir, const Plan& plan, const Graph& graph, const PlanJsonOptions& json) {
  EmitResult emitted = emit_module(graph, plan, default_emit_options(plan));
  for (const std::string& note : emitted.notes) std::fprintf(stderr, "tessera: note: codegen skipped %s\n", note.c_str());
  const Graph weighted = plan.quantization ? with_seeded_weights(graph, 0) : Graph();
  for (const std::string& path : write_emit_dir(dir, plan.quantization ? weighted : graph, plan, emitted.module,
                                                 plan_to_json_text(plan, graph, json)))
    note_written(path);
}

// Costs in the summary: milliseconds for the time-based models, plain units for mock.
std::string summary_cost(const Plan& plan, const Cost& c) { return display_cost(c, plan.cost_model); }

void print_summary(const Plan& plan) {
  std::map<std::string, std::pair<int, Cost>> per;
  for (const Partition& p : plan.partitions) {
    auto& e = per[p.backend];
    ++e.first;
    e.second += p.cost;
  }
  std::printf("%s: %s, total cost %s (%s, search %s), transfer %s, boundaries %s (%s)\n",
              plan.model.c_str(), count_of(plan.partitions.size(), "partition").c_str(),
              summary_cost(plan, plan.total_cost).c_str(), plan.cost_model.c_str(), plan.search.c_str(),
              summary_cost(plan, plan.transfer_cost).c_str(), summary_cost(plan, plan.boundary_cost).c_str(),
              count_of(plan.boundaries.size(), "crossing").c_str());
  for (const auto& [backend, e] : per)
    std::printf("  %-8s %14s  %s\n", backend.c_str(), count_of(size_t(e.first), "partition").c_str(),
                summary_cost(plan, e.second).c_str());
  std::printf("  %s, %lld costed, %s, search %.2f ms\n", count_of(size_t(plan.stats.candidates), "candidate").c_str(),
              (long long)plan.stats.costed, count_of(size_t(plan.stats.states), "state").c_str(), plan.stats.search_ms);
}

// -j when not given: enumeration, extraction and analytic estimates use every core (the plan is
// the same for any N), but measurements run one at a time, as with `tune`, so that two never
// share the cores they are timed on.
int default_jobs(const CostModel& model) {
  return model.measures() ? 1 : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void run_partition(const PartitionArgs& a) {
  SearchKind::parse_or_throw(a.search);
  std::vector<BackendSpec> backends = resolve_backends(backends_for_search(split_backend_list(a.backends), a.search), a.specs);
  const std::string cost = a.cost.empty() ? default_cost_spec(backends) : a.cost;
  std::unique_ptr<CostModel> model = make_cost_model(cost, cli_cost_model_options(a.compute_threads, a.cache));
  // With shape ranges, one graph per bucket; the primary one (opt) is what --emit, --explain and
  // --why show.
  std::optional<ShapeBuckets> buckets;
  if (a.shape_ranges.given()) buckets = a.shape_ranges.buckets();
  const std::vector<Graph> graphs = ShapeRangeOptions::load_graphs(a.model, buckets);
  const size_t primary = buckets ? buckets->primary : 0;
  const Graph& graph = graphs[primary];
  // Measurements are expensive: they always go to a persistent database, as with `tune`.
  std::unique_ptr<CostDatabase> db;
  if (!a.cache.empty()) db = CostDatabase::open(a.cache);
  else if (model->measures()) db = CostDatabase::open(default_cost_database_path());
  if (model->measures())
    std::fprintf(stderr, "tessera: measured costs: cost database %s (a rerun measures nothing twice)\n",
                 (a.cache.empty() ? default_cost_database_path().string() : a.cache).c_str());

  TuneOptions options;
  options.model_path = a.model.path;
  options.search = a.search;
  options.jobs = a.threads > 0 ? a.threads : default_jobs(*model);
  options.threads = a.compute_threads;
  options.coalesce = !a.no_coalesce;
  options.search_memory = a.search_memory_mb << 20;
  options.budget = a.accuracy.budget();
  options.verify = !a.no_verify;
  options.steering = a.steering.rules();
  // Measured costs: tune's pipeline, end to end (the verdicts tune left in the database are reused).
  std::vector<WhyQuery> why;   // checked before anything is measured
  for (const std::string& w : a.steering.why) why.push_back(parse_why(w, graph, backends));
  std::vector<TunedPlan> all;
  if (buckets) {
    std::vector<const Graph*> pointers;
    for (const Graph& g : graphs) pointers.push_back(&g);
    all = tune_buckets(pointers, *buckets, backends, *model, db.get(), options, a.shape_ranges.anchors_only()).plans;
  } else {
    all.push_back(tune_graph(graph, backends, *model, db.get(), options));
  }
  for (const TunedPlan& t : all) print_tune_record(t, a.compute_threads);
  const TunedPlan& tuned = all[primary];
  model.reset();   // a measuring model's progress ends with its summary line, before the "wrote" lines

  PlanJsonOptions json;
  json.with_timings = a.timings;
  if (!a.plan_path.empty() && buckets) {
    std::vector<TunedBucket> tb;
    for (size_t b = 0; b < all.size(); ++b) tb.push_back({buckets->buckets[b], &all[b].plan, &graphs[b]});
    write_plan_set_file(a.plan_path, buckets->ranges, tb, primary);
    note_written(a.plan_path);
  } else if (!a.plan_path.empty()) {
    write_plan_file(a.plan_path, tuned.plan, graph, json);
    note_written(a.plan_path);
  }
  if (!a.emit_dir.empty()) emit_outputs(a.emit_dir, tuned.plan, graph, json);
  if (a.explain) std::fputs(explain_plan(*tuned.search, graph).c_str(), stdout);
  else if (a.plan_path.empty() && why.empty()) print_summary(tuned.plan);
  for (size_t b = 0; buckets && b < all.size(); ++b) {
    std::printf("bucket %-24s %s, total cost %s%s\n", input_shapes_text(buckets->buckets[b]).c_str(), count_of(all[b].plan.partitions.size(), "partition").c_str(),
                summary_cost(all[b].plan, all[b].plan.total_cost).c_str(), b == primary ? "  (opt: the top-level plan)" : "");
  }
  if (!why.empty()) {
    const Steering steering = Steering::resolve(graph, backends, options.steering, a.model.path);
    for (const WhyQuery& q : why) std::fputs(explain_why(*tuned.search, graph, backends, steering, q).c_str(), stdout);
  }
  if (tuned.plan.accuracy) std::fprintf(stderr, "tessera: %s\n", accuracy_summary(tuned.plan).c_str());
}

}  // namespace

void add_partition_command(CLI::App& app) {
  auto args = std::make_shared<PartitionArgs>();
  auto* cmd = app.add_subcommand("partition", "search for the cheapest acyclic partition plan");
  args->model.add_to(*cmd);
  cmd->add_option("--backends", args->backends, "backends the plan may use, a,b,c")->required();
  cmd->add_option("--backend-spec", args->specs, "a tessera.backend spec file (repeatable)");
  cmd->add_option("--cost", args->cost, "mock:FILE, roofline[:DEVICE], measure (default: measure if every backend runs here, else roofline)");
  cmd->add_option("--search", args->search, "collage (default), greedy, exhaustive, single:<backend>");
  cmd->add_option("--plan", args->plan_path, "write the plan (tessera.plan JSON) here");
  cmd->add_option("--emit", args->emit_dir, "write the plan and partitioned module into this directory");
  cmd->add_option("--cache", args->cache, "cost database to read and extend");
  cmd->add_option("-j", args->threads, "threads for enumeration and costing (results identical for every N; default: one per core, 1 with --cost measure)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--threads", args->compute_threads,
                  "compute threads the plan will run with (run/tune --threads; default 1): picks the roofline profile")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--no-coalesce", args->no_coalesce, "keep each chosen candidate a partition of its own");
  cmd->add_option("--search-memory", args->search_memory_mb,
                  "MB the collage search may hold before it falls back to a plan it cannot prove optimal "
                  "(default: an eighth of this machine's memory, at most 256)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_flag("--no-verify", args->no_verify,
                "measured costs: skip the end-to-end race with single-backend plans (as tune --no-verify)");
  cmd->add_flag("--explain", args->explain, "per partition its cost and next-best alternative; search statistics");
  args->accuracy.add_to(*cmd);
  args->steering.add_to(*cmd);
  args->steering.add_why_to(*cmd);
  args->shape_ranges.add_to(*cmd);
  cmd->add_flag("--timings", args->timings, "write real *_ms statistics into the plan (no longer byte-stable)");
  cmd->callback([args] { run_partition(*args); });
}

}  // namespace tessera::cli
