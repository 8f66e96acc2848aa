// tessera tune MODEL... --backends LIST [--backend-spec FILE]... [--cache DB]
//   [--plan OUT.json | --plan-dir DIR] [--mpi] [--report R.json] [-j N] [--threads T] [--search S]
//   [--budget-ms X] [--repeats N] [--timeout S] [--no-coalesce] [--no-verify]
//   [--max-rel-error E] [--calibration NAME=FILE.npy]... [--pin SEL=B]... [--forbid SEL=B]...
//   [--why NODE[=BACKEND]]
// = `partition --cost measure` with a persistent cost database (docs/design.md), for one model or
// several sharing one database (a function two models share is measured once).
//
// Two phases, both over the same candidates:
//   1. measure: enumerate every model's candidates for every backend, extract and hash their
//      functions, and measure the distinct ones the database lacks. Alone: estimate_costs ->
//      MeasuredCostModel, whose journal appends each measurement to the database the moment it
//      finishes, and whose on_measured hook drives the progress line. With --mpi (under mpirun):
//      the same requests are dealt across ranks by src/distributed/ (distributed_tune.h); rank 0
//      appends each result as it arrives, the other ranks only measure and return here.
//      Knowing the whole list first is what gives the progress line its total and ETA.
//   2. tune: the tuning pipeline (tessera/tune.h), once per model, with the same cost model:
//      the search (every cost is now in the database, so nothing is measured twice), measured
//      wholes, then (unless --no-verify) the race of the plan against every single-backend plan
//      end to end and in-plan prices, all kept in the database; `partition --cost measure`,
//      `bench` and Python run the same pipeline, so on the same database they return this plan
//      without measuring.
// Ctrl-C (SIGINT) sets a flag: no new measurement starts, running children are killed, every
// finished measurement is already on disk; tune says so and exits 130. A kill -9 loses only the
// measurements running at that moment.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "cli/accuracy_options.h"
#include "runtime/budgeted_partition.h"
#include "cli/commands.h"
#include "distributed/distributed_tune.h"
#include "cost_models/measure/measure_progress.h"
#include "backends/compilers/backend_compiler.h"
#include "cli/model_options.h"
#include "cli/shape_range_options.h"
#include "cli/steering_options.h"
#include "search/candidate_layouts.h"
#include "search/partitioner.h"
#include "search/why_not.h"
#include "tessera/backend_spec.h"
#include "backends/spec/backend_spec_detail.h"
#include "backends/spec/candidate_space.h"
#include "tessera/cost_database.h"
#include "tessera/error.h"
#include "cost_models/estimator.h"
#include "cost_models/measure/measured_cost_model.h"
#include "tessera/plan.h"
#include "search/steering.h"
#include "ir/structural_hash.h"
#include "partition/sub_graph.h"
#include "cli/tune_report.h"
#include "cli/cli_output.h"
#include "support/plural.h"
#include "support/text.h"
#include "tessera/tune.h"
#include "tune/tune_buckets.h"
#include "search/search_kind.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Set by SIGINT; read by the measuring threads. A signal handler can only reach a global.
std::atomic<bool> interrupted{false};

extern "C" void on_sigint(int) { interrupted.store(true); }

struct TuneArgs {
  std::vector<std::string> models;
  std::vector<std::string> input_shapes;
  bool verbose = false;
  bool no_simplify = false;
  std::string backends;
  std::vector<std::string> specs;
  std::string search = "collage";
  size_t search_memory_mb = 0;   // 0: default_search_memory()
  std::string plan_path;
  std::string plan_dir;
  std::string cache;
  std::string report;
  bool mpi = false;
  int jobs = 1;
  int threads = 1;
  double budget_ms = 20;
  int repeats = 50;
  double timeout_s = 10;
  bool no_coalesce = false;
  bool no_verify = false;
  AccuracyOptions accuracy;
  SteeringOptions steering;
  ShapeRangeOptions shape_ranges;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The requests the pipeline will make for one model, built the same way (candidates in
// candidate_less order, steered, extract_function, structural_hash), appended to `requests`.
// `functions` owns the graphs the requests point into. Steering mistakes are UserErrors here,
// before anything is measured.
void add_candidate_requests(const Graph& graph, const std::vector<BackendSpec>& backends, int jobs,
                            const std::vector<SteeringRule>& steering, const std::string& model_path,
                            std::vector<Graph>& functions, std::vector<CostRequest>& requests) {
  DataflowIndex index(graph);
  std::vector<Candidate> candidates =
      steer_candidates(enumerate_candidates(index, backends, jobs).all(),
                       Steering::resolve(graph, backends, steering, model_path), graph, model_path);
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
  const CandidateLayouts boundary(graph);   // as price_candidates prices them
  for (size_t i = 0; i < candidates.size(); ++i) {
    const BackendSpec& b = *spec.at(candidates[i].backend);
    requests.emplace_back(functions[i], hashes[i], b.name, b.device, candidates[i].sub_graph.label());
    boundary.apply(requests.back(), candidates[i].sub_graph, b.detail().boundary_layout);
  }
}

// The first request of every distinct key, in request order, split by whether the database has it.
struct KeyCensus {
  size_t distinct = 0;
  std::vector<size_t> missing;   // request indices
};

KeyCensus census(const MeasuredCostModel& model, const std::vector<CostRequest>& requests, const CostDatabase& db) {
  KeyCensus c;
  std::set<CostKey> seen;
  for (size_t i = 0; i < requests.size(); ++i) {
    CostKey k = cost_key(model, requests[i]);
    if (!seen.insert(k).second) continue;
    if (!db.lookup(k)) c.missing.push_back(i);
  }
  c.distinct = seen.size();
  return c;
}

// Where each model's plan goes: --plan for one model, DIR/<model stem>.json with --plan-dir.
std::vector<std::string> plan_paths(const TuneArgs& a) {
  std::vector<std::string> out(a.models.size());
  if (!a.plan_path.empty() && !a.plan_dir.empty())
    throw UserError("--plan", a.plan_path, "give --plan or --plan-dir, not both");
  if (!a.plan_path.empty()) {
    if (a.models.size() > 1)
      throw UserError("--plan", a.plan_path,
                      "one plan file for " + std::to_string(a.models.size()) + " models: use --plan-dir DIR");
    out[0] = a.plan_path;
  }
  if (!a.plan_dir.empty()) {
    std::map<std::string, std::string> by_stem;
    for (size_t i = 0; i < a.models.size(); ++i) {
      std::string stem = fs::path(a.models[i]).stem().string();
      auto [it, fresh] = by_stem.emplace(stem, a.models[i]);
      if (!fresh)
        throw UserError("--plan-dir", a.plan_dir,
                        "models " + it->second + " and " + a.models[i] + " would both write " + stem + ".json");
      out[i] = (fs::path(a.plan_dir) / (stem + ".json")).string();
    }
  }
  return out;
}

void check_args(const TuneArgs& a) {
  SearchKind::parse_or_throw(a.search);
  if (a.jobs < 1) throw UserError("-j", std::to_string(a.jobs), "must be at least 1");
  if (a.threads < 1) throw UserError("--threads", std::to_string(a.threads), "must be at least 1");
  std::set<std::string> seen;
  for (const std::string& m : a.models)
    if (!seen.insert(m).second) throw UserError(m, "", "given twice");
}

// Phase 1 alone: every measurement in this process (the tune of before --mpi, unchanged).
void measure_here(const TuneArgs& a, MeasuredCostModel& model, const std::vector<CostRequest>& requests,
                  TuneReport& report) {
  estimate_costs(model, requests, {a.jobs, nullptr});
  MeasureStats ms = model.stats();
  report.measured_per_rank = {ms.measured};
  report.invalid = ms.invalid;
}

// Phase 1 under MPI, rank 0: deal what the database lacks.
void measure_distributed(distributed::MpiSession& mpi, const distributed::Work& work,
                         const KeyCensus& keys, CostDatabase& db, const distributed::ResultHook& on_result,
                         TuneReport& report) {
  distributed::DealReport d = distributed::deal(mpi, work, keys.missing, db, on_result);
  report.ranks = d.ranks;
  report.measured_per_rank = d.measured_per_rank;
  report.invalid = d.invalid;
  report.redealt = d.redealt;
  report.late = d.late;
  report.dead_ranks = d.dead_ranks;
  report.silent_ranks = d.silent_ranks;
  for (const distributed::Hello& h : d.hosts) report.hosts.push_back({h.rank, h.host, h.machine});
  std::sort(report.hosts.begin(), report.hosts.end(), [](const auto& x, const auto& y) { return x.rank < y.rank; });
  for (int r : d.silent_ranks)
    std::fprintf(stderr, "tessera: warning: rank %d never reported; it measured nothing\n", r);
}

// What both phases work on, fixed before anything is measured: the graphs (one per model, or
// with --shape-range one per model and bucket), the accuracy budget, the steering rules and the
// --why queries.
struct TuneInputs {
  const TuneArgs& args;
  const std::vector<BackendSpec>& backends;
  std::vector<Graph> graphs;
  std::vector<size_t> model_of;    // per graph: its model's index in args.models
  std::vector<size_t> bucket_of;   // per graph: its bucket (0 without shape ranges)
  std::optional<ShapeBuckets> buckets;
  AccuracyBudget budget;
  std::vector<SteeringRule> steering;
  std::vector<std::vector<WhyQuery>> why;   // per graph: the queries naming one of its nodes

  const std::string& model_path(size_t g) const { return args.models[model_of[g]]; }
  // --why is answered once per model: at its primary bucket.
  bool answers_why(size_t g) const { return !buckets || bucket_of[g] == buckets->primary; }
  // Whether graph g's candidates are measured: every graph's, or with --bucket-tune anchors only
  // the anchor buckets' (the others race the anchors' plans; tune.h).
  bool searched(size_t g) const { return !buckets || !args.shape_ranges.anchors_only() || buckets->anchor(bucket_of[g]); }
};

void load_models(const TuneArgs& a, TuneInputs& in) {
  if (a.shape_ranges.given()) in.buckets = a.shape_ranges.buckets();
  const size_t per_model = in.buckets ? in.buckets->buckets.size() : 1;
  for (size_t m = 0; m < a.models.size(); ++m)
    for (size_t b = 0; b < per_model; ++b) {
      std::vector<std::string> shapes =
          in.buckets ? ShapeRangeOptions::bucket_input_shapes(*in.buckets, b, a.input_shapes) : a.input_shapes;
      ModelOptions mo{a.models[m], shapes, a.verbose, true, a.no_simplify};
      in.graphs.push_back(mo.load());
      in.model_of.push_back(m);
      in.bucket_of.push_back(b);
    }
}

// Each --why query goes to every model with its node; a query no model has throws, naming the node.
std::vector<std::vector<WhyQuery>> why_queries(const TuneInputs& in) {
  const std::vector<Graph>& graphs = in.graphs;
  std::vector<std::vector<WhyQuery>> why(graphs.size());
  for (const std::string& w : in.args.steering.why) {
    bool found = false;
    for (size_t m = 0; m < graphs.size(); ++m)
      if (in.answers_why(m) &&
          (graphs[m].find_node(w.substr(0, w.rfind('='))) != kNoNode || graphs[m].find_node(w) != kNoNode)) {
        why[m].push_back(parse_why(w, graphs[m], in.backends));
        found = true;
      }
    if (!found) parse_why(w, graphs[0], in.backends);   // throws, naming the node
  }
  return why;
}

// Loads the models and checks the steering and --why against them, before anything is measured.
TuneInputs load_inputs(const TuneArgs& a, const std::vector<BackendSpec>& backends) {
  TuneInputs in{a, backends, {}, {}, {}, std::nullopt, a.accuracy.budget(), a.steering.rules(), {}};
  load_models(a, in);
  for (size_t g = 0; g < in.graphs.size(); ++g) Steering::resolve(in.graphs[g], backends, in.steering, in.model_path(g));   // fail early
  in.why = why_queries(in);
  return in;
}

// What phase 1 shows as it measures: the progress line (once its total is known) and the invalid
// measurements, reported after it. Fed by on_measured, from any thread.
struct MeasureLog {
  std::unique_ptr<MeasureProgress> progress;
  std::mutex invalid_mu;
  std::vector<std::string> invalid;   // "backend label: reason", for the report after phase 1

  void on_measured(const CostRequest& r, const CostEntry& e) {
    if (progress) progress->tick(e.cost.is_invalid());
    if (!e.cost.is_invalid()) return;
    std::lock_guard lock(invalid_mu);
    invalid.push_back(r.backend + " " + r.label + ": " + e.cost.reason());
  }
  distributed::ResultHook hook() {
    return [this](const CostRequest& r, const CostEntry& e) { on_measured(r, e); };
  }
};

MeasureOptions measure_options(const TuneArgs& a, bool alone, CostDatabase* db, MeasureLog& log) {
  MeasureOptions mo;
  mo.budget = std::chrono::duration<double>(a.budget_ms / 1000.0);
  mo.max_repeats = a.repeats;
  mo.timeout = std::chrono::duration<double>(a.timeout_s);
  mo.threads = a.threads;
  mo.max_parallel = a.jobs;
  mo.stop = &interrupted;
  if (alone) {   // alone, the model itself journals and reports; under MPI rank 0's dealer does
    mo.journal = db;
    mo.on_measured = log.hook();
  }
  return mo;
}

std::vector<BackendRef> backend_refs(const std::vector<BackendSpec>& backends) {
  std::vector<BackendRef> refs;
  for (const BackendSpec& b : backends) refs.push_back({b.name, b.device});
  return refs;
}

// Phase 1's requests, every model's in model order; `functions` owns the graphs they point into.
struct TuneRequests {
  std::vector<std::vector<Graph>> functions;   // per model
  std::vector<CostRequest> requests;
  std::vector<size_t> first_request;   // model m's requests are [first_request[m], first_request[m + 1])

  void collect(const TuneInputs& in) {
    functions.resize(in.graphs.size());
    for (size_t m = 0; m < in.graphs.size(); ++m) {
      first_request.push_back(requests.size());
      if (in.searched(m))
        // An int8 variant's functions carry calibrated ranges: measured as the search will ask for them.
        add_candidate_requests(budget_search_graph(in.graphs[m], in.backends, in.budget), in.backends, in.args.jobs,
                               in.steering, in.model_path(m), functions[m], requests);
    }
    first_request.push_back(requests.size());
  }
  // The distinct cost keys of the requests of graphs [first, last).
  size_t distinct_keys(const MeasuredCostModel& model, size_t first, size_t last) const {
    std::set<CostKey> own;
    for (size_t i = first_request[first]; i < first_request[last]; ++i) own.insert(cost_key(model, requests[i]));
    return own.size();
  }
};

// Rank 0's report as phase 1 begins: the database, this host (alone), and how many of the
// requests' distinct keys the database already has; the census is returned.
KeyCensus open_report(const std::string& db_path, bool alone, const distributed::Work& work,
                      const MeasuredCostModel& model, const CostDatabase& db, TuneReport& report) {
  report.database = db_path;
  if (alone) report.hosts.push_back({0, distributed::describe_rank(0, work).host, machine_fingerprint()});
  KeyCensus keys = census(model, *work.requests, db);
  report.candidates = work.requests->size();
  report.distinct = keys.distinct;
  report.from_database = keys.distinct - keys.missing.size();
  return keys;
}

void announce_measurements(const TuneArgs& a, const distributed::MpiSession* mpi, size_t candidates,
                           const KeyCensus& keys, const std::string& db_path) {
  std::string where = mpi ? " on " + std::to_string(mpi->size()) + " rank" + (mpi->size() == 1 ? "" : "s") : "";
  std::fprintf(stderr, "tessera: %zu candidates, %zu to measure%s (-j %d, %d thread%s each), cost database %s\n",
               candidates, keys.missing.size(), where.c_str(), a.jobs, a.threads, a.threads == 1 ? "" : "s",
               db_path.c_str());
}

// Phase 1's measuring, under the progress line and a SIGINT handler: here alone, or dealt across
// the ranks; MPI ends as soon as every rank has been told to stop.
void measure_missing(const TuneArgs& a, std::unique_ptr<distributed::MpiSession>& mpi, const distributed::Work& work,
                     const KeyCensus& keys, MeasuredCostModel& model, CostDatabase& db, MeasureLog& log,
                     TuneReport& report) {
  log.progress = std::make_unique<MeasureProgress>(keys.missing.size(), ::isatty(STDERR_FILENO) == 1);
  struct sigaction sa {}, old {};
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND;   // a second Ctrl-C ends tessera at once
  ::sigaction(SIGINT, &sa, &old);
  const auto m0 = Clock::now();
  if (mpi) measure_distributed(*mpi, work, keys, db, log.hook(), report);
  else measure_here(a, model, *work.requests, report);
  report.measure_s = seconds_since(m0);
  // Every rank has been told to stop: end MPI now rather than keep the workers waiting in
  // MPI_Finalize while rank 0 searches.
  mpi.reset();
  ::sigaction(SIGINT, &old, nullptr);
  log.progress->finish();
  log.progress.reset();   // the wholes measured while partitioning are not in its total (938/852 was shown)
}

// After phase 1: the first invalid measurements and the rate on stderr; after Ctrl-C, exit 130
// (every finished measurement is in the database). Returns how many functions phase 1 measured.
size_t report_measurements(const TuneReport& report, std::vector<std::string>& invalid, const std::string& db_path) {
  size_t measured = 0;
  for (size_t n : report.measured_per_rank) measured += n;
  std::sort(invalid.begin(), invalid.end());
  for (size_t i = 0; i < invalid.size() && i < 10; ++i)
    std::fprintf(stderr, "tessera: invalid: %s\n", invalid[i].c_str());
  if (invalid.size() > 10) std::fprintf(stderr, "tessera: ... and %zu more invalid\n", invalid.size() - 10);
  if (measured > 0)
    std::fprintf(stderr, "tessera: measured %zu functions in %.2f s (%.1f per second)\n", measured, report.measure_s,
                 static_cast<double>(measured) / report.measure_s);
  if (interrupted.load()) {
    std::fprintf(stderr, "tessera: interrupted: %zu measurements saved in %s; run tune again to continue\n", measured,
                 db_path.c_str());
    std::exit(130);
  }
  return measured;
}

TuneOptions tune_options(const TuneInputs& in, size_t g) {
  const TuneArgs& a = in.args;
  TuneOptions to;
  to.model_path = in.model_path(g);
  to.search = a.search;
  to.jobs = a.jobs;
  to.threads = a.threads;
  to.coalesce = !a.no_coalesce;
  to.search_memory = a.search_memory_mb << 20;
  to.budget = in.budget;
  to.verify = !a.no_verify;
  to.steering = in.steering;
  return to;
}

// The plan's lines on stdout: partitions, predicted time, phase 1's counts, partitions per backend.
void print_plan_summary(const Plan& plan, double ms, size_t measured, const TuneReport& report) {
  std::map<std::string, int> per_backend;
  for (const Partition& p : plan.partitions) ++per_backend[p.backend];
  std::printf("%s: %s, predicted %.4f ms (measured %zu new, %zu invalid, %zu from the database)\n",
              plan.model.c_str(), count_of(plan.partitions.size(), "partition").c_str(), ms, measured, report.invalid,
              report.from_database);
  for (const auto& [backend, n] : per_backend)
    std::printf("  %-8s %14s\n", backend.c_str(), count_of(size_t(n), "partition").c_str());
  if (plan.accuracy) std::printf("  %s\n", accuracy_summary(plan).c_str());
}

double plan_ms(const Plan& plan) { return plan.total_cost.is_value() ? plan.total_cost.seconds() * 1e3 : 0.0; }

// Phase 2 for the graphs [first, last) of one model (one, or one per bucket): the tuning
// pipeline per graph, the plan (or the buckets' plan file) written and summed up, --why answered.
void tune_model(const TuneInputs& in, size_t first, size_t last, const std::string& plan_path, MeasuredCostModel& model,
                CostDatabase* db, const TuneRequests& reqs, size_t measured, TuneReport& report) {
  std::vector<TunedPlan> tuned;
  std::vector<double> tune_s;
  std::vector<bool> searched;
  if (in.buckets) {
    std::vector<const Graph*> graphs;
    for (size_t g = first; g < last; ++g) graphs.push_back(&in.graphs[g]);
    TunedBuckets tb = tune_buckets(graphs, *in.buckets, in.backends, model, db, tune_options(in, first),
                                   in.args.shape_ranges.anchors_only());
    tuned = std::move(tb.plans);
    tune_s = std::move(tb.seconds);
    searched = std::move(tb.searched);
  } else {
    const auto t0 = Clock::now();
    tuned.push_back(tune_graph(in.graphs[first], in.backends, model, db, tune_options(in, first)));
    tune_s.push_back(seconds_since(t0));
  }
  for (const TunedPlan& t : tuned) print_tune_record(t, in.args.threads);
  const size_t primary = in.buckets ? in.buckets->primary : 0;
  if (in.buckets) {
    std::vector<TunedBucket> buckets;
    for (size_t b = 0; b < tuned.size(); ++b) buckets.push_back({in.buckets->buckets[b], &tuned[b].plan, &in.graphs[first + b]});
    for (size_t b = 0; b < tuned.size(); ++b) {
      std::printf("bucket %-24s %s, predicted %.4f ms, %s in %.2f s%s\n", input_shapes_text(buckets[b].shapes).c_str(),
                  count_of(tuned[b].plan.partitions.size(), "partition").c_str(), plan_ms(tuned[b].plan),
                  searched[b] ? "searched" : "raced the anchors' plans", tune_s[b],
                  b == primary ? "  (opt: the plan file's top-level plan)" : "");
    }
    if (!plan_path.empty()) {
      write_plan_set_file(plan_path, in.buckets->ranges, buckets, primary);
      note_written(plan_path);
    }
  } else if (!plan_path.empty()) {
    write_plan_file(plan_path, tuned[0].plan, in.graphs[first], {});
    note_written(plan_path);
  }
  const Plan& plan = tuned[primary].plan;
  const double ms = plan_ms(plan);
  report.models.push_back({in.model_path(first), plan_path, plan.partitions.size(), reqs.distinct_keys(model, first, last), ms,
                           last - first, tune_s});
  print_plan_summary(plan, ms, measured, report);
  for (size_t g = first; g < last; ++g) {
    if (in.why[g].empty()) continue;
    const Steering resolved = Steering::resolve(in.graphs[g], in.backends, in.steering, in.model_path(g));
    for (const WhyQuery& q : in.why[g])
      std::fputs(explain_why(*tuned[g - first].search, in.graphs[g], in.backends, resolved, q).c_str(), stdout);
  }
}

// Both phases, on every rank (workers return after phase 1); `mpi` ends during phase 1.
void tune_models(const TuneArgs& a, const std::vector<BackendSpec>& backends, const std::vector<std::string>& plans,
                 std::unique_ptr<distributed::MpiSession>& mpi, Clock::time_point t0) {
  const bool rank0 = !mpi || mpi->rank() == 0;
  const TuneInputs in = load_inputs(a, backends);
  std::string db_path = a.cache.empty() ? default_cost_database_path().string() : a.cache;
  std::unique_ptr<CostDatabase> db;
  if (rank0) db = CostDatabase::open(db_path);
  MeasureLog log;
  MeasuredCostModel model(measure_options(a, !mpi, db.get(), log));
  model.check_backends(backend_refs(backends));

  // Phase 1: measure what the database lacks.
  TuneRequests reqs;
  reqs.collect(in);
  distributed::Work work{&reqs.requests, &model, a.jobs, std::chrono::duration<double>(std::max(2.0, a.timeout_s / 2)),
                         &interrupted};
  if (!rank0) {
    distributed::serve(*mpi, work);
    return;
  }
  if (!a.plan_dir.empty()) make_output_dir("--plan-dir", a.plan_dir);   // before anything is measured
  TuneReport report;
  const KeyCensus keys = open_report(db_path, !mpi, work, model, *db, report);
  announce_measurements(a, mpi.get(), reqs.requests.size(), keys, db_path);
  measure_missing(a, mpi, work, keys, model, *db, log, report);
  for (auto& f : reqs.functions) f.clear();
  const size_t measured = report_measurements(report, log.invalid, db_path);

  // Phase 2: the tuning pipeline per model, all costs from the database (alone: through the
  // model's journal; under MPI: as the estimator's cache). Anything still missing (a job no rank
  // could finish) is measured here, on rank 0, and counted as rank 0's.
  const size_t before = model.stats().measured;
  for (size_t first = 0, last = 0; first < in.graphs.size(); first = last) {
    while (last < in.graphs.size() && in.model_of[last] == in.model_of[first]) ++last;
    tune_model(in, first, last, plans[in.model_of[first]], model, db.get(), reqs, measured, report);
  }
  report.measured_per_rank[0] += model.stats().measured - before;
  report.wall_s = seconds_since(t0);
  if (!a.report.empty()) {
    write_tune_report(a.report, report);
    note_written(a.report);
  }
}

void run_tune(const TuneArgs& a) {
  check_args(a);
  const std::vector<std::string> plans = plan_paths(a);
  std::vector<BackendSpec> backends = resolve_backends(backends_for_search(split_backend_list(a.backends), a.search), a.specs);
  const auto t0 = Clock::now();

  // Under --mpi every rank runs this function; only rank 0 opens the database and writes files.
  std::unique_ptr<distributed::MpiSession> mpi;
  if (a.mpi) mpi = std::make_unique<distributed::MpiSession>();
  try {
    tune_models(a, backends, plans, mpi, t0);
  } catch (const std::exception& e) {
    // Under MPI the other ranks must not wait for a rank that is gone: rank 0 stops them, a worker
    // tells rank 0 (which then stops the run with this rank's message).
    if (mpi) distributed::abandon(*mpi, e.what());
    throw;
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "partition with measured costs, kept in a persistent cost database");
  cmd->add_option("MODEL", args->models, "model files (.onnx or tessera .json); several share one database")
      ->required();
  cmd->add_option("--input-shape", args->input_shapes, "bind a symbolic input shape, NAME=1x3x224x224 (repeatable)");
  cmd->add_flag("--verbose", args->verbose, "print every import warning (e.g. each weight missing from disk), not a summary");
  cmd->add_flag("--no-simplify", args->no_simplify,
                "keep the ONNX graph as exported (no Identity/no-op removal, no BatchNormalization folding)");
  cmd->add_option("--backends", args->backends, "real backends the plan may use, a,b,c")->required();
  cmd->add_option("--backend-spec", args->specs, "a tessera.backend spec file (repeatable)");
  cmd->add_option("--cache", args->cache, "cost database (default ~/.cache/tessera/costs.db)");
  cmd->add_option("--plan", args->plan_path, "write the plan (tessera.plan JSON) here (one model)");
  cmd->add_option("--plan-dir", args->plan_dir, "write one plan per model here, named <model stem>.json");
  cmd->add_flag("--mpi", args->mpi, "under mpirun: deal measurements across ranks; rank 0 writes the database and plans");
  cmd->add_option("--report", args->report, "write a JSON report: ranks, measured_per_rank, from_database, invalid, wall_s, ...");
  cmd->add_option("--search", args->search, "collage (default), greedy, exhaustive, single:<backend>");
  cmd->add_option("--search-memory", args->search_memory_mb,
                  "MB the collage search may hold before it falls back (default: an eighth of this machine's memory, at most 256)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("-j", args->jobs, "measurements at once (per rank; one per core at most); also enumeration threads")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--threads", args->threads, "compute threads of each measurement (default 1)");
  cmd->add_option("--budget-ms", args->budget_ms, "timed runs per measurement stop after this (default 20)");
  cmd->add_option("--repeat", args->repeats, "...or after this many runs (default 50)");
  cmd->add_option("--repeats", args->repeats)->group("");   // the old spelling, hidden
  cmd->add_option("--timeout", args->timeout_s, "seconds before a measurement is killed and Invalid (default 10)");
  cmd->add_flag("--no-coalesce", args->no_coalesce, "keep each chosen candidate a partition of its own");
  cmd->add_flag("--no-verify", args->no_verify,
                "skip the end-to-end comparison with single-backend plans (the search's plan is returned as is)");
  args->accuracy.add_to(*cmd);
  args->steering.add_to(*cmd);
  args->steering.add_why_to(*cmd);
  args->shape_ranges.add_to(*cmd);
  cmd->callback([args] { run_tune(*args); });
}

}  // namespace tessera::cli
