// tessera refit --models M... --backends LIST [--cache DB] [--profile IN] [-o OUT.json]
//   [--threads T] [-j N]
// Refits a device profile's roofline factors to the measured costs `tessera tune` left in a cost
// database (the fit: src/cost_models/roofline_refit.h).
//
//   for each model: candidates of every backend (enumerate_candidates, the same list tune
//                   measures) -> extract_function -> structural_hash -> CostRequest
//                -> cost_key(MeasuredCostModel, request): the exact key tune stored it under
//                   (backend versions, CPU, --threads are all in it), so nothing here knows the
//                   key layout
//                -> a Value in the database: one sample (roofline_work(fn), median seconds)
//   distinct keys only (the same Conv in two models is one sample), then refit_profile.
// Invalid and missing measurements are skipped and counted. Without -o the profile is printed.
// Use it: --cost roofline:OUT.json (a path), or roofline:NAME for data/devices/NAME.json.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "tessera/backend_spec.h"
#include "backends/spec/candidate_space.h"
#include "tessera/cost_database.h"
#include "partition/dataflow_index.h"
#include "tessera/error.h"
#include "cost_models/estimator.h"
#include "cost_models/measure/measured_cost_model.h"
#include "tessera/model_loader.h"
#include "cost_models/roofline_refit.h"
#include "ir/structural_hash.h"
#include "partition/sub_graph.h"

namespace tessera::cli {
namespace {

struct RefitArgs {
  std::vector<std::string> models;
  std::string backends;
  std::string cache;
  std::string profile = "host";
  std::string output;
  int threads = 1;
  int jobs = 1;
  int worst = 0;
};

struct Counts {
  size_t candidates = 0, found = 0, invalid = 0, missing = 0;
};

// A model argument: an existing path, else data/models/NAME.onnx.
std::string model_path(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec) || arg.find('/') != std::string::npos) return arg;
  return find_data_file("models/" + arg + ".onnx").string();
}

// Adds one sample per distinct measured function of `graph` not in `seen`.
void collect(const Graph& graph, const std::vector<BackendSpec>& backends, const MeasuredCostModel& model,
             const CostDatabase& db, int jobs, std::set<CostKey>& seen, std::vector<RefitSample>& out,
             Counts& counts) {
  DataflowIndex index(graph);
  std::map<std::string, std::string> device;
  for (const BackendSpec& b : backends) device[b.name] = b.device;
  for (const Candidate& c : enumerate_candidates(index, backends, jobs).all()) {
    ++counts.candidates;
    Graph fn = extract_function(graph, c.sub_graph);
    CostRequest r(fn, structural_hash(fn), c.backend, device.at(c.backend), c.sub_graph.label());
    CostKey key = cost_key(model, r);
    if (!seen.insert(key).second) continue;
    std::optional<CostEntry> e = db.lookup(key);
    if (!e) {
      ++counts.missing;
    } else if (!e->cost.is_value() || !(e->cost.seconds() > 0.0)) {
      ++counts.invalid;
    } else {
      ++counts.found;
      out.push_back(RefitSample{c.backend, r.label, roofline_work(fn), e->cost.seconds()});
    }
  }
}

std::string eff_text(const Efficiency& e, const DeviceProfile& p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.3g/%.3g/%.3g", e.compute, e.memory, p.call_overhead_s(e) * 1e6);
  return buf;
}

// The n samples of `backend` the refitted profile predicts worst (largest |log error|).
void print_worst(const std::vector<RefitSample>& samples, const BackendRefit& b, const DeviceProfile& p, int n) {
  RooflineRates rates = rates_of(p, b.after);
  std::vector<std::pair<double, const RefitSample*>> off;
  for (const RefitSample& s : samples) {
    if (s.backend == b.backend) off.emplace_back(std::log(predict_seconds(s.work, rates) / s.measured_s), &s);
  }
  std::stable_sort(off.begin(), off.end(), [](const auto& x, const auto& y) { return std::abs(x.first) > std::abs(y.first); });
  for (int i = 0; i < n && i < static_cast<int>(off.size()); ++i) {
    const RefitSample& s = *off[i].second;
    double flops = 0, bytes = 0;
    for (const NodeWork& w : s.work) flops += w.flops, bytes += w.bytes;
    std::printf("  %-8s measured %9.2f us, predicted %9.2f us (%.3g MFLOP, %.3g MB)  %s\n", b.backend.c_str(),
                s.measured_s * 1e6, s.measured_s * std::exp(off[i].first) * 1e6, flops / 1e6, bytes / 1e6,
                s.label.c_str());
  }
}

void run_refit(const RefitArgs& a) {
  if (a.models.empty()) throw UserError("--models", "", "name at least one model");
  std::vector<BackendSpec> backends = resolve_backends(split_backend_list(a.backends), {});
  DeviceProfile base = resolve_device_profile(a.profile);
  for (const BackendSpec& b : backends) {
    if (b.device != base.device) {
      throw UserError("--profile", base.file, "describes device '" + base.device + "' but backend '" + b.name +
                                                  "' runs on '" + b.device + "'");
    }
  }
  std::string db_path = a.cache.empty() ? default_cost_database_path().string() : a.cache;
  if (!std::filesystem::is_regular_file(db_path)) throw UserError(db_path, "", "no such cost database (run tessera tune first)");
  std::unique_ptr<CostDatabase> db = CostDatabase::open(db_path);
  MeasureOptions mo;
  mo.threads = a.threads;   // part of the device fingerprint: must match tune's --threads
  MeasuredCostModel model(mo);

  std::set<CostKey> seen;
  std::vector<RefitSample> samples;
  Counts counts;
  std::string names;
  for (const std::string& m : a.models) {
    Graph graph = load_model(model_path(m), {});
    collect(graph, backends, model, *db, a.jobs, seen, samples, counts);
    names += (names.empty() ? "" : ", ") + std::filesystem::path(m).stem().string();
  }
  std::fprintf(stderr, "tessera: %zu candidates, %zu distinct measured functions (%zu invalid, %zu not measured) in %s\n",
               counts.candidates, counts.found, counts.invalid, counts.missing, db_path.c_str());
  if (samples.empty()) throw UserError(db_path, "", "no measured costs for these models and backends (run tessera tune first)");

  std::string source = "tessera refit of " + std::filesystem::path(base.file).filename().string() + " to " +
                       std::to_string(samples.size()) + " measured functions (" + names + "; backends " +
                       a.backends + "; " + model.device_fingerprint(base.device) + ")";
  RefitResult r = refit_profile(base, samples, source);

  std::printf("%-8s %5s  %-22s %-22s  %-17s %-17s %s\n", "backend", "n", "before c/m/overhead_us",
              "after c/m/overhead_us", "median err b->a", "mean err b->a", "rms log err b->a");
  for (const BackendRefit& b : r.backends) {
    char med[32], mean[32];
    std::snprintf(med, sizeof med, "%.0f%% -> %.0f%%", 100 * b.error_before.median_abs_rel, 100 * b.error_after.median_abs_rel);
    std::snprintf(mean, sizeof mean, "%.0f%% -> %.0f%%", 100 * b.error_before.mean_abs_rel, 100 * b.error_after.mean_abs_rel);
    std::printf("%-8s %5zu  %-22s %-22s  %-17s %-17s %.2f -> %.2f%s\n", b.backend.c_str(), b.samples,
                eff_text(b.before, base).c_str(), eff_text(b.after, r.profile).c_str(), med, mean,
                b.error_before.rms_log, b.error_after.rms_log, b.fitted ? "" : "  (too few samples: kept)");
  }
  for (const BackendRefit& b : r.backends) print_worst(samples, b, r.profile, a.worst);
  std::printf("peak %.4g -> %.4g GFLOP/s, bandwidth %.4g -> %.4g GB/s\n", base.peak_gflops, r.profile.peak_gflops,
              base.bandwidth_gbs, r.profile.bandwidth_gbs);
  if (a.output.empty()) {
    std::cout << device_profile_to_json(r.profile);
  } else {
    save_device_profile(r.profile, a.output);
    std::fprintf(stderr, "wrote %s (use it: --cost roofline:%s)\n", a.output.c_str(), a.output.c_str());
  }
}

}  // namespace

void add_refit_command(CLI::App& app) {
  auto args = std::make_shared<RefitArgs>();
  auto* cmd = app.add_subcommand("refit", "fit a device profile's roofline factors to measured costs");
  cmd->add_option("--models", args->models, "models whose candidates were tuned (paths, or names in data/models)")
      ->required();
  cmd->add_option("--backends", args->backends, "backends to refit, a,b,c (as given to tune)")->required();
  cmd->add_option("--cache", args->cache, "cost database tune wrote (default ~/.cache/tessera/costs.db)");
  cmd->add_option("--profile", args->profile, "profile to start from: a path or a name in data/devices (default host)");
  cmd->add_option("-o,--output", args->output, "write the refitted profile here (default: print it)");
  cmd->add_option("--threads", args->threads, "the --threads tune measured with (default 1)");
  cmd->add_option("-j", args->jobs, "enumeration threads (default 1)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--worst", args->worst, "list the N samples per backend the refitted profile predicts worst");
  cmd->callback([args] { run_refit(*args); });
}

}  // namespace tessera::cli
