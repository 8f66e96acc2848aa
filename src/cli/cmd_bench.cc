// tessera bench MODEL --combos "ref" "ref,onednn" ... [--cost roofline|measure|...] [--search S]
//   [--cache DB] [--repeat N] [--threads T] [--no-coalesce] [--json] [--svg OUT.svg] [--plan-dir DIR]
//   [--max-rel-error E] [--calibration N=F.npy]... [--pin SEL=B]... [--forbid SEL=B]...
// (docs/design.md). Per backend combination: the tuning pipeline, exactly as `tessera tune --backends
// <combination>` runs it (tessera/tune.h: same cost database, same verdicts), then the plans'
// executors timed together in interleaved rounds (src/tune/bench.h, which tessera.bench in Python
// shares). Costs default to measured where every backend runs here, as for `partition`. Prints a
// table (per row predicted ms, measured ms, predicted / measured; then the best single-backend row
// against the all-backend row); --json prints a list of {"backends", "predicted_ms", "measured_ms",
// "predicted_over_measured", "clock"} (measured in "cpu" time at one thread, run_clock.h; + "error" for a
// combination that could not be planned or run, with null values; + "chosen" when tune's race
// replaced the search's plan by another contender); --svg writes bench_chart.h's bar chart;
// --plan-dir writes each combination's plan as DIR/<a+b+c>.json. Every combination runs with the
// same seeded inputs and weights.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/accuracy_options.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "cli/model_options.h"
#include "cli/shape_range_options.h"
#include "cli/steering_options.h"
#include "search/partitioner.h"
#include "tune/bench.h"
#include "backends/compilers/backend_compiler.h"
#include "tessera/backend_spec.h"
#include "runtime/bench_chart.h"
#include "tessera/cost_model.h"
#include "tessera/error.h"
#include "runtime/executor.h"
#include "runtime/latency.h"
#include "runtime/run_clock.h"
#include "cost_models/measure/measured_cost_model.h"
#include "runtime/model_data.h"
#include "search/steering.h"

namespace tessera::cli {
namespace {

struct BenchArgs {
  ModelOptions model;
  std::vector<std::string> combos;
  std::string cost;   // empty: measure where every backend runs here, else roofline
  std::string search = "collage";
  std::string cache;
  int repeat = 10;
  int threads = 1;
  bool json = false;
  bool no_coalesce = false;
  std::string svg;
  std::string plan_dir;
  size_t search_memory_mb = 0;   // 0: default_search_memory()
  AccuracyOptions accuracy;
  SteeringOptions steering;
  ShapeRangeOptions shape_ranges;
};

// One bucket's rows (the only ones without shape ranges; `shapes` empty then).
struct BucketRows {
  std::string shapes;
  std::vector<BenchRow> rows;
};

nlohmann::json rows_json(const std::vector<BucketRows>& buckets) {
  nlohmann::json list = nlohmann::json::array();
  for (const BucketRows& b : buckets)
    for (const BenchRow& r : b.rows) {
      nlohmann::json j;
      if (!b.shapes.empty()) j["input_shapes"] = b.shapes;
      j["backends"] = r.backends;
      j["predicted_ms"] = r.predicted_ms ? nlohmann::json(*r.predicted_ms) : nlohmann::json(nullptr);
      j["measured_ms"] = r.measured_ms ? nlohmann::json(*r.measured_ms) : nlohmann::json(nullptr);
      const std::optional<double> ratio = predicted_over_measured(r);
      j["predicted_over_measured"] = ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr);
      if (!r.clock.empty()) j["clock"] = r.clock;   // measured_ms is CPU time ("cpu", one thread) or "wall" time
      if (r.rel_error) j["rel_error"] = *r.rel_error;   // verified error of a budgeted plan
      if (!r.chosen.empty()) j["chosen"] = r.chosen;    // tune's end-to-end choice, when it made one
      if (!r.error.empty()) j["error"] = r.error;
      list.push_back(j);
    }
  return list;
}

void print_rows(const std::vector<BenchRow>& rows) {
  std::printf("%-28s %14s %14s %8s\n", "backends", "predicted ms", "measured ms", "pred/meas");
  for (const BenchRow& r : rows) {
    std::string name;
    for (const std::string& b : r.backends) name += (name.empty() ? "" : ",") + b;
    auto cell = [](const std::optional<double>& v) { return v ? std::to_string(*v).substr(0, 10) : std::string("-"); };
    const std::optional<double> pm = predicted_over_measured(r);
    std::string ratio = pm ? std::to_string(*pm).substr(0, 5) : "-";
    std::printf("%-28s %14s %14s %8s%s%s", name.c_str(), cell(r.predicted_ms).c_str(), cell(r.measured_ms).c_str(),
                ratio.c_str(), r.error.empty() ? "" : "  ", r.error.c_str());
    if (r.rel_error) std::printf("  rel error %.3g", *r.rel_error);
    if (!r.chosen.empty()) std::printf("  (%s, chosen end to end)", r.chosen.c_str());
    std::printf("\n");
  }
  // The promise bench checks: the mix is no slower than its best single backend (figures paired).
  if (const std::optional<AllVersusSingle> v = all_versus_best_single(rows)) {
    auto name = [&](size_t i) {
      std::string n;
      for (const std::string& b : rows[i].backends) n += (n.empty() ? "" : ",") + b;
      return n;
    };
    std::printf("best single-backend row (%s) / all-backend row (%s): %.3fx\n", name(v->single).c_str(), name(v->all).c_str(),
                v->speedup);
  }
}

void run_bench(const BenchArgs& a) {
  if (a.combos.empty()) throw UserError("--combos", "", "give at least one backend combination, e.g. \"ref\" \"ref,onednn\"");
  if (a.repeat < 1) throw UserError("--repeat", "", "must be >= 1");
  // A misspelt backend is a usage error before anything runs, not a row of the table.
  for (const std::string& combo : a.combos) {
    try {
      resolve_backends(split_backend_list(combo), {});
    } catch (const UserError& e) {
      throw UserError("--combos", "'" + combo + "'", e.option_name() == "backends" ? e.detail() : e.what());
    }
  }
  set_compute_threads(std::max(1, a.threads));
  std::vector<std::vector<std::string>> combos;
  std::vector<BackendSpec> all;   // every backend named, for the default cost model
  for (const std::string& c : a.combos) {
    combos.push_back(split_backend_list(c));
    for (BackendSpec& b : resolve_backends(combos.back(), {})) all.push_back(std::move(b));
  }
  // With shape ranges, every bucket is benched at its own shapes, one table each.
  std::optional<ShapeBuckets> buckets;
  if (a.shape_ranges.given()) buckets = a.shape_ranges.buckets();
  const std::vector<Graph> graphs = ShapeRangeOptions::load_graphs(a.model, buckets);
  // Steering is checked against every backend named before anything is measured; each
  // combination then obeys what concerns it (bench.h).
  const std::vector<SteeringRule> steering = a.steering.rules();
  for (const Graph& g : graphs) Steering::resolve(g, all, steering, a.model.path);
  const std::string cost = a.cost.empty() ? default_cost_spec(all) : a.cost;
  std::unique_ptr<CostModel> model = make_cost_model(cost, cli_cost_model_options(std::max(1, a.threads), a.cache));
  // Measurements go to a persistent database, as with `tune`.
  std::unique_ptr<CostDatabase> db;
  if (!a.cache.empty()) db = CostDatabase::open(a.cache);
  else if (model->measures()) db = CostDatabase::open(default_cost_database_path());

  BenchOptions options;
  options.tune.model_path = a.model.path;
  options.tune.search = a.search;
  options.tune.threads = std::max(1, a.threads);
  options.tune.coalesce = !a.no_coalesce;
  options.tune.search_memory = a.search_memory_mb << 20;
  options.tune.budget = a.accuracy.budget();
  options.tune.steering = steering;
  options.repeat = a.repeat;
  options.database = db.get();
  // Progress on stderr: each combination is tuned and compiled, seconds apiece, then all race.
  options.progress = [&](size_t i) {
    if (i < a.combos.size()) std::fprintf(stderr, "tessera: bench %zu/%zu: %s\n", i + 1, a.combos.size(), a.combos[i].c_str());
    else std::fprintf(stderr, "tessera: bench: timing the plans in interleaved rounds\n");
  };
  // Each combination's plan per bucket, for --plan-dir (one plan file per combination).
  std::vector<std::vector<Plan>> plans(combos.size());
  if (!a.plan_dir.empty()) {
    make_output_dir("--plan-dir", a.plan_dir);
    options.on_plan = [&](size_t i, const Plan& plan) { plans[i].push_back(plan); };
  }
  std::vector<BucketRows> results;
  for (size_t b = 0; b < graphs.size(); ++b) {
    if (buckets) std::fprintf(stderr, "tessera: bench: bucket %s\n", input_shapes_text(buckets->buckets[b]).c_str());
    const std::vector<HostTensor> inputs = model_inputs(graphs[b], 0);
    results.push_back({buckets ? input_shapes_text(buckets->buckets[b]) : "", bench_combinations(graphs[b], inputs, combos, *model, options)});
  }
  for (size_t i = 0; i < plans.size() && !a.plan_dir.empty(); ++i) {
    std::string name;
    for (const std::string& b : combos[i]) name += (name.empty() ? "" : "+") + b;
    const std::string path = (std::filesystem::path(a.plan_dir) / (name + ".json")).string();
    if (plans[i].size() != graphs.size()) continue;   // the combination could not be planned
    if (buckets) {
      std::vector<TunedBucket> tb;
      for (size_t b = 0; b < graphs.size(); ++b) tb.push_back({buckets->buckets[b], &plans[i][b], &graphs[b]});
      write_plan_set_file(path, buckets->ranges, tb, buckets->primary);
    } else {
      write_plan_file(path, plans[i][0], graphs[0], {});
    }
    note_written(path);
  }

  if (a.json) {
    std::printf("%s\n", rows_json(results).dump(2).c_str());
  } else {
    std::printf("%s (cost %s, search %s, %d thread%s, raced in interleaved rounds of >= %d runs; measured: %s)\n", a.model.path.c_str(),
                model->name().c_str(), a.search.c_str(), a.threads, a.threads == 1 ? "" : "s", a.repeat,
                run_clock_for_threads(std::max(1, a.threads)) == RunClock::cpu ? "CPU time per run" : "wall time per run");
    for (const BucketRows& b : results) {
      if (!b.shapes.empty()) std::printf("bucket %s\n", b.shapes.c_str());
      print_rows(b.rows);
    }
  }
  if (!a.svg.empty()) {
    std::ofstream out(a.svg);
    if (!out) throw UserError(a.svg, "", "cannot write");
    out << bench_chart_svg(a.model.path + ": predicted (" + model->name() + ") vs measured", results[buckets ? buckets->primary : 0].rows);
    out.close();
    if (!out) throw UserError(a.svg, "", "cannot write");
    note_written(a.svg);
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "per backend combination: plan, predicted cost, measured end-to-end latency");
  args->model.add_to(*cmd);
  args->model.runs = true;
  cmd->add_option("--combos", args->combos, "backend combinations, each a,b,c (several arguments)")->required()->expected(1, -1);
  cmd->add_option("--cost", args->cost,
                  "cost model for planning: measure (default where every backend runs here, else roofline), roofline[:DEVICE], mock:FILE");
  cmd->add_option("--search", args->search, "collage (default), greedy, exhaustive");
  cmd->add_option("--cache", args->cache, "cost database to read and extend (default ~/.cache/tessera/costs.db with measured costs)");
  cmd->add_option("--search-memory", args->search_memory_mb,
                  "MB the collage search may hold before it falls back (default: an eighth of this machine's memory, at most 256)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--repeat", args->repeat, "timed runs of each plan's first round, after one warm-up (default 10; later rounds last >= 25 ms)");
  cmd->add_option("--threads", args->threads, "compute threads for every backend (default 1)");
  cmd->add_flag("--no-coalesce", args->no_coalesce, "plans whose functions are exactly the chosen candidates");
  cmd->add_flag("--json", args->json, "print a JSON list of {backends, predicted_ms, measured_ms}");
  cmd->add_option("--svg", args->svg, "write a bar chart of predicted and measured latency");
  cmd->add_option("--plan-dir", args->plan_dir, "write each combination's plan here, named <a+b+c>.json");
  args->accuracy.add_to(*cmd);
  args->steering.add_to(*cmd);
  args->shape_ranges.add_to(*cmd, false);
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace tessera::cli
