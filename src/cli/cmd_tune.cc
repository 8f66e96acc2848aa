// tessera tune MODEL --backends LIST [--backend-spec FILE]... [--cache DB] [--plan OUT.json] [-j N]
//   [--threads T] [--search S] [--budget-ms X] [--repeats N] [--timeout S] [--no-coalesce]
// = `partition --cost measure` with a persistent cost database (CONTRACTS.md).
//
// Two phases, both over the same candidates:
//   1. measure: enumerate every backend's candidates, extract and hash their functions, and
//      measure the distinct ones the database lacks (estimate_costs -> MeasuredCostModel, whose
//      journal appends each measurement to the database the moment it finishes, and whose
//      on_measured hook drives the progress line). Knowing the whole list first is what gives the
//      progress line its total and ETA.
//   2. partition: the search engineer's pipeline (search/partitioner.h) with the same model;
//      every cost is now a journal hit, so nothing is measured twice.
// Ctrl-C (SIGINT) sets a flag: no new measurement starts, running children are killed, every
// finished measurement is already on disk; tune says so and exits 130. A kill -9 loses only the
// measurements running at that moment.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <mutex>
#include <memory>
#include <set>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "commands.h"
#include "measure_progress.h"
#include "model_options.h"
#include "search/partitioner.h"
#include "tessera/backend_spec.h"
#include "tessera/candidate_space.h"
#include "tessera/cost_database.h"
#include "tessera/error.h"
#include "tessera/estimator.h"
#include "tessera/measured_cost_model.h"
#include "tessera/plan.h"
#include "tessera/structural_hash.h"
#include "tessera/sub_graph.h"
#include "tessera/text.h"

namespace tessera::cli {
namespace {

// Set by SIGINT; read by the measuring threads. A signal handler can only reach a global.
std::atomic<bool> interrupted{false};

extern "C" void on_sigint(int) { interrupted.store(true); }

struct TuneArgs {
  ModelOptions model;
  std::string backends;
  std::vector<std::string> specs;
  std::string search = "collage";
  std::string plan_path;
  std::string cache;
  int jobs = 1;
  int threads = 1;
  double budget_ms = 20;
  int repeats = 50;
  double timeout_s = 10;
  bool no_coalesce = false;
};

// The requests the pipeline will make, built the same way (candidates in candidate_less order,
// extract_function, structural_hash). `functions` owns the graphs the requests point into.
std::vector<CostRequest> candidate_requests(const Graph& graph, const std::vector<BackendSpec>& backends,
                                            int jobs, std::vector<Graph>& functions) {
  DataflowIndex index(graph);
  std::vector<Candidate> candidates = enumerate_candidates(index, backends, jobs).all();
  functions.assign(candidates.size(), Graph{});
  std::vector<uint64_t> hashes(candidates.size());
  tbb::task_arena arena(jobs);
  arena.execute([&] {
    tbb::parallel_for(size_t{0}, candidates.size(), [&](size_t i) {
      functions[i] = extract_function(graph, candidates[i].sub_graph);
      hashes[i] = structural_hash(functions[i]);
    });
  });
  std::map<std::string, const BackendSpec*> spec;
  for (const BackendSpec& b : backends) spec[b.name] = &b;
  std::vector<CostRequest> requests;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const BackendSpec& b = *spec.at(candidates[i].backend);
    requests.emplace_back(functions[i], hashes[i], b.name, b.device, candidates[i].sub_graph.label());
  }
  return requests;
}

// Distinct keys the database does not hold yet: what phase 1 will measure.
size_t count_missing(const MeasuredCostModel& model, const std::vector<CostRequest>& requests,
                     const CostDatabase& db) {
  std::set<CostKey> missing;
  for (const CostRequest& r : requests) {
    CostKey k = cost_key(model, r);
    if (!db.lookup(k)) missing.insert(std::move(k));
  }
  return missing.size();
}

void run_tune(const TuneArgs& a) {
  if (!is_search_name(a.search))
    throw UserError("--search", "", "unknown search '" + a.search + "' (expected collage, greedy, exhaustive or single:<backend>)");
  if (a.jobs < 1) throw UserError("-j", std::to_string(a.jobs), "must be at least 1");
  if (a.threads < 1) throw UserError("--threads", std::to_string(a.threads), "must be at least 1");
  std::vector<std::string> names = split_backend_list(a.backends);
  if (a.search.rfind("single:", 0) == 0) {
    std::string target = a.search.substr(7);
    if (std::find(names.begin(), names.end(), target) == names.end()) names.push_back(target);
  }
  std::vector<BackendSpec> backends = resolve_backends(names, a.specs);
  Graph graph = a.model.load();
  std::string db_path = a.cache.empty() ? default_cost_database_path().string() : a.cache;
  std::unique_ptr<CostDatabase> db = CostDatabase::open(db_path);

  std::unique_ptr<MeasureProgress> progress;
  std::mutex invalid_mu;
  std::vector<std::string> invalid;   // "backend label: reason", for the report after phase 1
  MeasureOptions mo;
  mo.budget = std::chrono::duration<double>(a.budget_ms / 1000.0);
  mo.max_repeats = a.repeats;
  mo.timeout = std::chrono::duration<double>(a.timeout_s);
  mo.threads = a.threads;
  mo.max_parallel = a.jobs;
  mo.journal = db.get();
  mo.stop = &interrupted;
  mo.on_measured = [&](const CostRequest& r, const CostEntry& e) {
    if (progress) progress->tick(e.cost.is_invalid());
    if (!e.cost.is_invalid()) return;
    std::lock_guard lock(invalid_mu);
    invalid.push_back(r.backend + " " + r.label + ": " + e.cost.reason());
  };
  MeasuredCostModel model(mo);
  std::vector<BackendRef> refs;
  for (const BackendSpec& b : backends) refs.push_back({b.name, b.device});
  model.check_backends(refs);

  // Phase 1: measure what the database lacks.
  std::vector<Graph> functions;
  std::vector<CostRequest> requests = candidate_requests(graph, backends, a.jobs, functions);
  size_t todo = count_missing(model, requests, *db);
  std::fprintf(stderr, "tessera: %zu candidates, %zu to measure (-j %d, %d thread%s each), cost database %s\n",
               requests.size(), todo, a.jobs, a.threads, a.threads == 1 ? "" : "s", db_path.c_str());
  progress = std::make_unique<MeasureProgress>(todo, ::isatty(STDERR_FILENO) == 1);
  struct sigaction sa {}, old {};
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND;   // a second Ctrl-C ends tessera at once
  ::sigaction(SIGINT, &sa, &old);
  auto t0 = std::chrono::steady_clock::now();
  estimate_costs(model, requests, {a.jobs, nullptr});
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::sigaction(SIGINT, &old, nullptr);
  progress->finish();
  functions.clear();
  MeasureStats ms = model.stats();
  std::sort(invalid.begin(), invalid.end());
  for (size_t i = 0; i < invalid.size() && i < 10; ++i)
    std::fprintf(stderr, "tessera: invalid: %s\n", invalid[i].c_str());
  if (invalid.size() > 10) std::fprintf(stderr, "tessera: ... and %zu more invalid\n", invalid.size() - 10);
  if (ms.measured > 0)
    std::fprintf(stderr, "tessera: measured %zu functions in %.2f s (%.1f per second)\n", ms.measured, wall,
                 static_cast<double>(ms.measured) / wall);
  if (interrupted.load()) {
    std::fprintf(stderr, "tessera: interrupted: %zu measurements saved in %s; run tune again to continue\n",
                 ms.measured, db_path.c_str());
    std::exit(130);
  }

  // Phase 2: the partition pipeline, all costs from the journal.
  PartitionOptions po;
  po.model_path = a.model.path;
  po.search = a.search;
  po.threads = a.jobs;
  po.coalesce = !a.no_coalesce;
  PartitionOutcome outcome = partition_graph(graph, backends, model, po);
  for (const std::string& l : outcome.limits) std::fprintf(stderr, "tessera: warning: %s\n", printable(l).c_str());
  if (!a.plan_path.empty()) write_plan_file(a.plan_path, outcome.plan, graph, {});

  const Plan& plan = outcome.plan;
  std::map<std::string, int> per_backend;
  for (const Partition& p : plan.partitions) ++per_backend[p.backend];
  std::printf("%s: %zu partitions, predicted %.4f ms (measured %zu new, %zu invalid, %zu from the database)\n",
              plan.model.c_str(), plan.partitions.size(),
              plan.total_cost.is_value() ? plan.total_cost.seconds() * 1e3 : 0.0, ms.measured, ms.invalid,
              ms.journal_hits);
  for (const auto& [backend, n] : per_backend) std::printf("  %-8s %4d partitions\n", backend.c_str(), n);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "partition with measured costs, kept in a persistent cost database");
  args->model.add_to(*cmd);
  cmd->add_option("--backends", args->backends, "real backends the plan may use, a,b,c")->required();
  cmd->add_option("--backend-spec", args->specs, "a tessera.backend spec file (repeatable)");
  cmd->add_option("--cache", args->cache, "cost database (default ~/.cache/tessera/costs.db)");
  cmd->add_option("--plan", args->plan_path, "write the plan (tessera.plan JSON) here");
  cmd->add_option("--search", args->search, "collage (default), greedy, exhaustive, single:<backend>");
  cmd->add_option("-j", args->jobs, "measurements at once (one per core at most); also enumeration threads")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--threads", args->threads, "compute threads of each measurement (default 1)");
  cmd->add_option("--budget-ms", args->budget_ms, "timed runs per measurement stop after this (default 20)");
  cmd->add_option("--repeats", args->repeats, "...or after this many runs (default 50)");
  cmd->add_option("--timeout", args->timeout_s, "seconds before a measurement is killed and Invalid (default 10)");
  cmd->add_flag("--no-coalesce", args->no_coalesce, "keep each chosen candidate a partition of its own");
  cmd->callback([args] { run_tune(*args); });
}

}  // namespace tessera::cli
