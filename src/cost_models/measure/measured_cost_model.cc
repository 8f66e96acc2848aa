// MeasuredCostModel: fingerprints, slots, the journal, and one isolated measurement per request.
// See src/cost_models/measure/measured_cost_model.h.
#include "cost_models/measure/measured_cost_model.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "cost_models/measure/backend_fit.h"
#include "cost_models/measure/isolated_call.h"
#include "cost_models/measure/measure_progress.h"
#include "cost_models/measure/measure_function.h"
#include "cost_models/measure/test_sleep_compiler.h"
#include "tessera/error.h"
#include "cost_models/estimator.h"
#include "ir/structural_hash.h"

namespace tessera {
namespace {

// A child killed by these was interrupted from outside (Ctrl-C reaches the whole process group),
// not crashed by its backend: its cost is Unknown, never stored.
bool external_signal(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP; }

}  // namespace

MeasuredCostModel::MeasuredCostModel(MeasureOptions options) : options_(std::move(options)) {
  if (!options_.make_compiler) options_.make_compiler = make_measure_compiler;
  if (options_.backends.empty()) options_.backends = backend_compiler_names();
  if (options_.threads < 1) options_.threads = 1;
  if (options_.evict_bytes < 0) options_.evict_bytes = static_cast<int64_t>(default_evict_bytes());
  max_parallel_ = options_.max_parallel > 0 ? options_.max_parallel
                                           : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string versions;
  for (const std::string& b : options_.backends) {
    std::string v;
    try {
      v = options_.make_compiler(b)->version();
    } catch (const std::exception&) {
      v = "unavailable";
    }
    versions += b + "=" + v + ";";
  }
  versions += "evict=" + std::to_string(options_.evict_bytes) + ";";
  fingerprint_ = "measure/" + std::to_string(kMeasureRevision) + "/" + hash_hex(fnv1a64(versions));
  machine_ = machine_fingerprint();
}

std::string MeasuredCostModel::device_fingerprint(std::string_view device) const {
  return std::string(device) + "/" + machine_ + "/t" + std::to_string(options_.threads);
}

MeasureStats MeasuredCostModel::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void MeasuredCostModel::check_backends_impl(const std::vector<BackendRef>& backends) const {
  for (const BackendRef& b : backends) {
    try {
      options_.make_compiler(b.name);
    } catch (const std::exception& e) {
      std::string names;
      for (const std::string& n : backend_compiler_names()) names += (names.empty() ? "" : ", ") + n;
      throw UserError::option("backends", b.name,
                      "cannot be measured: no compiler for it in this build (backends that run here: " + names + ")");
    }
  }
}

Cost MeasuredCostModel::estimate_impl(const CostRequest& request) const {
  return estimate_entry_impl(request).cost;
}

CostEntry MeasuredCostModel::estimate_entry_impl(const CostRequest& request) const {
  std::optional<CostKey> key;
  if (options_.journal) {
    key = cost_key(*this, request);
    if (std::optional<CostEntry> hit = options_.journal->lookup(*key)) {
      std::lock_guard lock(mu_);
      ++stats_.journal_hits;
      return *hit;
    }
  }
  {
    std::unique_lock lock(mu_);
    // The stop flag comes from a signal handler, which cannot notify: poll it.
    while (running_ >= max_parallel_ && !stopping()) slot_free_.wait_for(lock, std::chrono::milliseconds(50));
    if (stopping()) {
      ++stats_.skipped;
      return CostEntry{Cost::unknown(), 0.0, 0};
    }
    ++running_;
  }
  CostEntry entry = measure(request);
  {
    std::lock_guard lock(mu_);
    --running_;
    if (entry.cost.is_unknown()) {
      ++stats_.skipped;
    } else {
      ++stats_.measured;
      if (entry.cost.is_invalid()) ++stats_.invalid;
    }
  }
  slot_free_.notify_one();
  if (!entry.cost.is_unknown()) {
    if (options_.journal) options_.journal->insert(*key, entry);
    if (options_.on_measured) options_.on_measured(request, entry);
  }
  return entry;
}

CostEntry MeasuredCostModel::measure(const CostRequest& request) const {
  TimingOptions timing{options_.budget, options_.min_repeats, options_.max_repeats, options_.seed,
                       static_cast<size_t>(options_.evict_bytes), cpu_clock()};
  auto body = [&]() -> std::string {
    set_compute_threads(options_.threads);
    std::unique_ptr<BackendCompiler> compiler = options_.make_compiler(request.backend);
    // A precision variant's error is measured with its time (CostEntry::error).
    std::unique_ptr<BackendCompiler> reference;
    if (compiler->precision() != "f32") reference = options_.make_compiler("ref");
    return measure_function(*compiler, *request.function, timing, reference.get(), request.layouts.get())
        .encode();
  };

  IsolatedResult r;
  if (options_.isolate) {
    r = run_isolated(body, options_.timeout, options_.stop);
  } else {
    try {
      r.text = body();
    } catch (const std::exception& e) {
      r.status = IsolatedResult::Status::Failed;
      r.text = e.what();
    }
  }
  using S = IsolatedResult::Status;
  if (r.status == S::Stopped || (r.status == S::Crashed && external_signal(r.code)))
    return CostEntry{Cost::unknown(), 0.0, 0};
  if (r.status != S::Ok) return CostEntry{Cost::invalid(r.describe(options_.timeout)), 0.0, 0};
  std::optional<Timing> t = Timing::decode(r.text);
  if (!t) return CostEntry{Cost::invalid("unreadable answer from the measurement: '" + r.text + "'"), 0.0, 0};
  return CostEntry{Cost::value(t->median), t->p90 - t->p10, t->samples, t->error};
}

MeasureOptions parse_measure_options(std::string_view arg, MeasureOptions o) {
  auto fail = [&](const std::string& what) -> UserError {
    return UserError::option("cost", "measure:" + std::string(arg), what);
  };
  size_t pos = 0;
  while (pos < arg.size()) {
    size_t comma = arg.find(',', pos);
    std::string item(arg.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    pos = comma == std::string_view::npos ? arg.size() : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw fail("'" + item + "' is not key=value");
    std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    double x = 0;
    try {
      size_t used = 0;
      x = std::stod(v, &used);
      if (used != v.size() || !(x >= 0)) throw std::invalid_argument(v);
    } catch (const std::exception&) {
      throw fail("'" + v + "' is not a non-negative number for " + k);
    }
    if (k == "budget_ms") o.budget = std::chrono::duration<double>(x / 1000.0);
    else if (k == "repeats") o.max_repeats = std::max(1, static_cast<int>(x));
    else if (k == "min_repeats") o.min_repeats = std::max(1, static_cast<int>(x));
    else if (k == "timeout_s") o.timeout = std::chrono::duration<double>(x);
    else if (k == "threads") o.threads = std::max(1, static_cast<int>(x));
    else if (k == "parallel") o.max_parallel = static_cast<int>(x);
    else if (k == "evict_kb") o.evict_bytes = static_cast<int64_t>(std::min(x, 1048576.0) * 1024);
    else throw fail("unknown key '" + k + "' (expected budget_ms, repeats, min_repeats, timeout_s, threads, parallel, evict_kb)");
  }
  return o;
}

CostModelOptions measure_cost_model_options(int threads) {
  CostModelOptions o;
  o.make_measure = [threads](std::string_view arg) -> std::unique_ptr<CostModel> {
    MeasureOptions base;
    base.threads = threads;
    MeasureOptions m = parse_measure_options(arg, base);
    // Whichever command asked, a measurement shows progress (tune has its own, with a total).
    auto ticker = std::make_shared<MeasureTicker>(::isatty(STDERR_FILENO) == 1);
    m.on_measured = [ticker](const CostRequest&, const CostEntry& e) { ticker->tick(e.cost.is_invalid()); };
    return std::make_unique<MeasuredCostModel>(m);
  };
  o.host.fit_backends = [](DeviceProfile& p, int threads) {
    BackendFitOptions f;
    f.threads = threads;
    return fit_backend_efficiency(p, f);
  };
  return o;
}

}  // namespace tessera
