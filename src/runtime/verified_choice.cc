// Verified choice of a plan by end-to-end latency. See src/runtime/verified_choice.h.
#include "runtime/verified_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "tessera/error.h"
#include "runtime/executor.h"
#include "runtime/latency.h"
#include "support/median.h"
#include "runtime/model_data.h"
#include "ir/structural_hash.h"

namespace tessera {
namespace {

// plan_latency_key with the model's structural hash already computed (it is the same for every
// contender of one model, and hashing a large graph is not free).
CostKey latency_key(uint64_t graph_hash, const Plan& plan, const CostModel& model) {
  std::string device = plan.partitions.empty() ? "cpu" : plan.partitions.front().device;
  std::string identity = hash_hex(graph_hash) + "|" + plan_assignment(plan) + "|run" + std::to_string(kPlanRunRevision);
  return CostKey{hash_hex(fnv1a64(identity)), "plan", model.device_fingerprint(device), model.fingerprint()};
}

// A contender's round medians, by round (none where it did not run).
using RoundRecord = std::vector<std::optional<double>>;

double typical_round(const RoundRecord& rounds) {
  std::vector<double> ms;
  for (const std::optional<double>& r : rounds)
    if (r) ms.push_back(*r);
  return lower_median(ms);
}

size_t rounds_run(const RoundRecord& rounds) {
  return static_cast<size_t>(std::count_if(rounds.begin(), rounds.end(), [](const auto& r) { return r.has_value(); }));
}

// The race's figures, paired with its pacer (see the header comment): the pacer is `pacer` when
// given and timed, else the contender timed in the most rounds (then the fastest typical round,
// then the first). It keeps its typical round; a contender that shared at least `min_shared`
// rounds with it gets the pacer's typical round times the median ratio of their round medians
// over those rounds; any other its own typical round. Contenders never timed keep `known` (the
// database's figure, or none).
std::vector<std::optional<double>> paired_latencies(const std::vector<RoundRecord>& record,
                                                    const std::vector<std::optional<double>>& known,
                                                    size_t min_shared, std::optional<size_t> pacer) {
  const size_t n = record.size();
  std::vector<std::optional<double>> latency = known;
  const bool chosen = pacer && *pacer < n && rounds_run(record[*pacer]) > 0;
  if (!chosen) pacer.reset();
  for (size_t i = 0; i < n; ++i) {
    if (rounds_run(record[i]) == 0) continue;
    latency[i] = typical_round(record[i]);
    if (chosen) continue;
    if (!pacer || rounds_run(record[i]) > rounds_run(record[*pacer]) ||
        (rounds_run(record[i]) == rounds_run(record[*pacer]) && *latency[i] < *latency[*pacer]))
      pacer = i;
  }
  if (!pacer) return latency;
  const RoundRecord& p = record[*pacer];
  for (size_t i = 0; i < n; ++i) {
    if (i == *pacer) continue;
    std::vector<double> ratios;
    for (size_t r = 0; r < std::min(p.size(), record[i].size()); ++r)
      if (p[r] && record[i][r] && *p[r] > 0.0) ratios.push_back(*record[i][r] / *p[r]);
    if (ratios.size() >= min_shared) latency[i] = *latency[*pacer] * median(ratios);
  }
  return latency;
}

// The fastest single-backend plan and the fastest mixed one among contenders with a latency.
// Within a group the earlier wins ties: singles in the order given, mixed plans the search's first
// (a later mixed plan must be tie_margin faster).
struct Leaders {
  std::optional<size_t> single, mixed;
};

Leaders leaders(const std::vector<PlanContender>& contenders, double tie_margin) {
  Leaders l;
  for (size_t i = 0; i < contenders.size(); ++i) {
    const PlanContender& c = contenders[i];
    if (!c.latency_ms) continue;
    std::optional<size_t>& group = c.single_backend ? l.single : l.mixed;
    const double margin = c.single_backend ? 0.0 : tie_margin;
    if (!group || *c.latency_ms < *contenders[*group].latency_ms * (1.0 - margin)) group = i;
  }
  return l;
}

}  // namespace

std::string plan_assignment(const Plan& plan) {
  std::string s;
  for (const Partition& p : plan.partitions) {
    s += p.backend + ":";
    p.nodes.for_each([&](int n) { s += std::to_string(n) + ","; });
    s += ";";
  }
  return s;
}

CostKey plan_latency_key(const Graph& graph, const Plan& plan, const CostModel& model) {
  return latency_key(structural_hash(graph), plan, model);
}

std::vector<std::optional<double>> race_contenders(const std::vector<std::optional<double>>& known,
                                                   const std::vector<char>& to_time,
                                                   const std::function<double(size_t, int, double)>& time_round,
                                                   const VerifyOptions& options) {
  const size_t n = known.size();
  std::vector<RoundRecord> record(n);
  // The schedule runs on each contender's own typical round (one-sided noise: the lower median
  // of two rounds is the undisturbed one), or its database figure.
  auto latency = [&](size_t i) -> std::optional<double> {
    if (known[i]) return known[i];
    if (rounds_run(record[i]) == 0) return std::nullopt;
    return typical_round(record[i]);
  };
  auto leader = [&] {   // the best latency so far; infinite while none is known
    double best = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n; ++i)
      if (std::optional<double> l = latency(i); l && *l < best) best = *l;
    return best;
  };
  std::vector<char> running(n, 0);
  for (size_t i = 0; i < n; ++i) running[i] = to_time[i] && !known[i];
  const int rounds = std::max(1, options.rounds);
  for (int round = 0; round < std::max(rounds, options.max_rounds); ++round) {
    // Round 1 at `repeat` runs; later ones long enough to be more than one moment of the machine.
    int repeat = std::max(1, options.repeat);
    if (const double best = leader(); round > 0 && std::isfinite(best) && best > 0.0) {
      const double wanted = std::ceil(options.min_round_ms / best);
      repeat = static_cast<int>(std::clamp(wanted, double(repeat), double(std::max(repeat, options.max_repeat))));
    }
    for (size_t k = 0; k < n; ++k) {
      const size_t i = round % 2 == 0 ? k : n - 1 - k;   // alternate direction
      record[i].resize(static_cast<size_t>(round) + 1);
      if (running[i]) record[i][static_cast<size_t>(round)] = time_round(i, repeat, leader() * options.give_up_above);
    }
    // Who can still win: within drop_above of the leader, and after `rounds`, within `close` of
    // it. A contender timed once and under give_up_above runs a second round before it is
    // dropped: one disturbed round must not drop the best plan (a neighbour that takes a core for
    // one round can put the eventual winner 1.5x behind in it). Fewer than two can win: the race
    // is run.
    const double bar = leader() * (round + 1 < rounds ? options.drop_above : options.close);
    const double hopeless = leader() * options.give_up_above;
    size_t in_range = 0;
    for (size_t i = 0; i < n; ++i) {
      const std::optional<double> l = latency(i);
      const bool second_round = running[i] && rounds_run(record[i]) < 2 && *l <= hopeless;
      if (running[i] && *l > bar && !second_round) running[i] = 0;
      if (l && (*l <= bar || second_round)) ++in_range;
    }
    if (in_range < 2 || std::none_of(running.begin(), running.end(), [](char r) { return r != 0; })) break;
  }
  return paired_latencies(record, known, static_cast<size_t>(std::max(1, options.min_paired_rounds)), options.pacer);
}

std::optional<NarrowWin> narrow_win(const std::vector<PlanContender>& contenders, double tie_margin,
                                   double clear_margin) {
  const Leaders l = leaders(contenders, tie_margin);
  if (!l.single || !l.mixed) return std::nullopt;
  const double m = *contenders[*l.mixed].latency_ms;
  const double s = *contenders[*l.single].latency_ms;
  if (m >= s * (1.0 - tie_margin) || m < s * (1.0 - clear_margin)) return std::nullopt;
  return NarrowWin{*l.mixed, *l.single};
}

size_t pick_contender(const std::vector<PlanContender>& contenders, double tie_margin, double clear_margin) {
  const Leaders l = leaders(contenders, tie_margin);
  if (!l.single) return l.mixed.value_or(0);
  if (!l.mixed) return *l.single;
  const PlanContender& m = contenders[*l.mixed];
  const PlanContender& s = contenders[*l.single];
  if (!narrow_win(contenders, tie_margin, clear_margin))   // a tie, or a clear win
    return *m.latency_ms < *s.latency_ms * (1.0 - tie_margin) ? *l.mixed : *l.single;
  // A narrow race win: the search's prices must put the mix ahead too (where both plans have them).
  const Cost& mc = m.plan.total_cost;
  const Cost& sc = s.plan.total_cost;
  const bool priced = mc.is_value() && sc.is_value() && mc.number() > 0.0 && sc.number() > 0.0;
  return !priced || mc.number() < sc.number() * (1.0 - tie_margin) ? *l.mixed : *l.single;
}

void confirm_narrow_win(std::vector<PlanContender>& contenders,
                        const std::function<double(size_t, int, double)>& time_round, const VerifyOptions& options) {
  const std::optional<NarrowWin> w = narrow_win(contenders, options.tie_margin, options.clear_margin);
  if (!w || !contenders[w->mixed].measured_now || !contenders[w->single].measured_now) return;
  std::vector<char> pair(contenders.size(), 0);
  pair[w->mixed] = pair[w->single] = 1;
  VerifyOptions again = options;
  again.pacer = w->single;
  const std::vector<std::optional<double>> second =
      race_contenders(std::vector<std::optional<double>>(contenders.size()), pair, time_round, again);
  if (!second[w->mixed] || !second[w->single] || *second[w->single] <= 0.0) return;
  const double single_ms = *contenders[w->single].latency_ms;
  const double first = *contenders[w->mixed].latency_ms / single_ms;
  contenders[w->mixed].latency_ms = single_ms * std::max(first, *second[w->mixed] / *second[w->single]);
}

size_t choose_fastest_plan(const Graph& graph, std::vector<PlanContender>& contenders, CostDatabase* database,
                           const CostModel& model, const VerifyOptions& options) {
  // Distinct assignments only, first occurrence kept (the search's plan comes first). A mixed
  // contender that is a single-backend plan (the search chose one backend) is that plan: it takes
  // the single label and the single side of the tie rule.
  std::vector<std::string> seen;
  std::vector<PlanContender> distinct;
  for (PlanContender& c : contenders) {
    std::string a = plan_assignment(c.plan);
    if (auto it = std::find(seen.begin(), seen.end(), a); it != seen.end()) {
      PlanContender& kept = distinct[static_cast<size_t>(it - seen.begin())];
      if (c.single_backend && !kept.single_backend) {
        kept.label = c.label;
        kept.single_backend = true;
      }
      continue;
    }
    seen.push_back(std::move(a));
    distinct.push_back(std::move(c));
  }
  contenders = std::move(distinct);
  if (contenders.size() < 2) return 0;

  // From the database where known.
  std::vector<CostKey> keys;
  const uint64_t graph_hash = structural_hash(graph);
  for (PlanContender& c : contenders) {
    keys.push_back(latency_key(graph_hash, c.plan, model));
    if (!database) continue;
    if (auto e = database->lookup(keys.back())) {
      if (e->cost.is_value()) c.latency_ms = e->cost.seconds() * 1e3;
      if (e->cost.is_invalid()) c.failed = e->cost.reason();
    }
  }

  // Measure the rest: compile all first, then race them (race_contenders).
  std::vector<char> to_time(contenders.size(), 0);
  for (size_t i = 0; i < contenders.size(); ++i) to_time[i] = !contenders[i].latency_ms && contenders[i].failed.empty();
  if (std::count(to_time.begin(), to_time.end(), 1) > 0 && options.may_measure) {
    std::vector<HostTensor> inputs = model_inputs(graph, 0);
    std::vector<std::unique_ptr<Executor>> executors(contenders.size());
    for (size_t i = 0; i < contenders.size(); ++i) {
      if (!to_time[i]) continue;
      try {
        executors[i] = std::make_unique<Executor>(graph, contenders[i].plan);
      } catch (const std::exception& e) {
        // A contender that does not build here cannot win; remembered, so a rerun agrees.
        contenders[i].failed = e.what();
        to_time[i] = 0;
        if (database) database->insert(keys[i], CostEntry{Cost::invalid(e.what()), 0.0, 0});
      }
    }
    std::vector<int64_t> runs(contenders.size(), 0);
    const RunClock clock = plan_run_clock();   // CPU time at one thread (run_clock.h)
    std::vector<std::optional<double>> known;
    for (const PlanContender& c : contenders) known.push_back(c.latency_ms);
    auto time_round = [&](size_t i, int round_repeat, double give_up_above_ms) {
      LatencyStats s = measure_latency(*executors[i], inputs, round_repeat, 1, give_up_above_ms, clock);
      runs[i] += static_cast<int64_t>(s.samples_ms.size());
      return s.median_ms;
    };
    std::vector<std::optional<double>> raced = race_contenders(known, to_time, time_round, options);
    for (size_t i = 0; i < contenders.size(); ++i) {
      if (!to_time[i] || !raced[i]) continue;
      contenders[i].latency_ms = raced[i];
      contenders[i].measured_now = true;
    }
    if (options.confirm_narrow) confirm_narrow_win(contenders, time_round, options);
    for (size_t i = 0; i < contenders.size(); ++i)
      if (contenders[i].measured_now && database)
        database->insert(keys[i], CostEntry{Cost::value(*contenders[i].latency_ms * 1e-3), 0.0, runs[i]});
  }

  for (const PlanContender& c : contenders)
    if (!c.latency_ms && c.failed.empty()) return 0;   // not every contender is known: keep the search's plan
  if (!contenders[0].latency_ms) return 0;             // the search's plan itself did not run: nothing to compare
  return pick_contender(contenders, options.tie_margin, options.clear_margin);
}

}  // namespace tessera
