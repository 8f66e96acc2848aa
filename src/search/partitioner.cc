#include "search/partitioner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "backends/spec/backend_spec_detail.h"
#include "search/bounded_search.h"
#include "search/candidate_layouts.h"
#include "search/coalesce.h"
#include "search/collage_search.h"
#include "search/crossing_accounting.h"
#include "search/exhaustive_search.h"
#include "search/measured_wholes.h"
#include "search/greedy_search.h"
#include "search/layout_conversions.h"
#include "search/single_backend_search.h"
#include "search/cost_display.h"
#include "tessera/error.h"
#include "ir/structural_hash.h"
#include "partition/sub_graph.h"
#include "search/search_kind.h"

namespace tessera {
namespace {

// Whether a request's layouts (null: the backend's native ones) are `layouts` (nullopt: native).
bool same_layouts(const BoundaryLayouts* priced, const std::optional<BoundaryLayouts>& layouts) {
  return priced ? layouts && *priced == *layouts : !layouts;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// f(0..count-1) on up to `threads` threads (<= 0: all cores); sequential below `min_count` items,
// where starting an arena costs more than it saves (cheap items), but heavy items (one backend's
// whole enumeration) pass min_count = 2.
template <typename F>
void parallel_slots(int threads, size_t count, F&& f, size_t min_count = 64) {
  if (threads == 1 || count < min_count) {
    for (size_t i = 0; i < count; ++i) f(i);
    return;
  }
  tbb::task_arena arena(threads <= 0 ? tbb::task_arena::automatic : threads);
  arena.execute([&] { tbb::parallel_for(size_t{0}, count, [&](size_t i) { f(i); }); });
}

const BackendSpec* find_spec(const std::vector<BackendSpec>& backends, const std::string& name) {
  for (const BackendSpec& b : backends)
    if (b.name == name) return &b;
  return nullptr;
}

struct PricedCandidates {
  std::vector<Cost> costs;
  std::vector<std::string> devices;
  std::vector<std::optional<double>> errors;   // measured relative errors (precision variants)
  EstimateStats stats;
};

// Extracts and hashes every candidate's function and prices each distinct one once.
//
// Functions are extracted a block at a time (in parallel, by slot) and only the first occurrence
// of each distinct function is kept: a 10,584-node encoder has 106,272 candidates but 296
// distinct functions, so holding every extracted Graph at once (hundreds of MB) only fed the
// allocator. Distinct means what estimate_costs means (same structural hash and backend, and
// structurally_equal), and the kept ones reach it in first-occurrence order, so its slots, its
// database keys and its handling of a hash collision are what they were with every request.
PricedCandidates price_candidates(const Graph& graph, const std::vector<BackendSpec>& backends, const CostModel& model,
                                  const PartitionOptions& options, const std::vector<Candidate>& candidates) {
  constexpr size_t kBlock = 4096;
  struct Kept {
    Graph function;
    std::string form;                           // canonical_form(function)
    uint64_t hash = 0;                          // fnv1a64(form) == structural_hash(function)
  };
  std::deque<Kept> kept;                        // stable addresses: requests point into it
  std::vector<CostRequest> requests;
  std::vector<size_t> request_of(candidates.size());
  std::map<std::pair<uint64_t, const BackendSpec*>, std::vector<size_t>> by_key;   // -> requests
  std::vector<Kept> block(std::min(kBlock, candidates.size()));
  const CandidateLayouts boundary(graph);
  PricedCandidates out;
  out.devices.reserve(candidates.size());
  for (size_t start = 0; start < candidates.size(); start += kBlock) {
    const size_t len = std::min(kBlock, candidates.size() - start);
    parallel_slots(options.threads, len, [&](size_t i) {
      block[i].function = extract_function(graph, candidates[start + i].sub_graph);
      block[i].form = canonical_form(block[i].function);
      block[i].hash = fnv1a64(block[i].form);
    });
    for (size_t i = 0; i < len; ++i) {
      const Candidate& c = candidates[start + i];
      const BackendSpec* spec = find_spec(backends, c.backend);
      out.devices.push_back(spec->device);
      // Priced with the layouts it runs with at the graph's inputs and outputs (candidate_layouts.h).
      std::optional<BoundaryLayouts> layouts = boundary.of(c.sub_graph, block[i].function, spec->detail().boundary_layout);
      const uint64_t key = block[i].hash ^ (layouts ? layouts_tag(*layouts) : 0);
      std::vector<size_t>& same = by_key[{key, spec}];
      size_t found = requests.size();
      for (size_t r : same)
        if (kept[r].form == block[i].form && same_layouts(requests[r].layouts.get(), layouts)) {    // == structurally_equal
          found = r;
          break;
        }
      if (found == requests.size()) {
        kept.push_back(std::move(block[i]));
        requests.emplace_back(kept.back().function, key, spec->name, spec->device, c.sub_graph.label());
        if (layouts) requests.back().layouts = std::make_shared<const BoundaryLayouts>(std::move(*layouts));
        same.push_back(found);
      }
      request_of[start + i] = found;
    }
  }
  EstimateResult estimated = estimate_costs(model, requests, {options.threads, options.database});
  out.costs.reserve(candidates.size());
  out.errors.reserve(candidates.size());
  for (size_t r : request_of) {
    out.costs.push_back(estimated.costs[r]);
    out.errors.push_back(estimated.errors[r]);
  }
  out.stats = estimated.stats;
  out.stats.requests = candidates.size();
  return out;
}

SearchResult run_search(const SearchProblem& problem, const std::vector<BackendSpec>& backends,
                        const std::vector<std::string>& backend_order, const PartitionOptions& options) {
  const SearchKind search = SearchKind::parse_or_throw(options.search);
  if (options.allow && search.kind != SearchKind::Kind::collage)
    throw UserError::option("search", options.search, "an accuracy budget (max_rel_error) needs the collage search");
  const size_t budget = options.search_memory ? options.search_memory : default_search_memory();
  if (search.kind == SearchKind::Kind::collage) {
    CollageOptions collage;
    collage.memory_budget = budget;
    if (options.allow) collage.allowed = options.allow(problem);
    return bounded_collage_search(problem, collage, backend_order);
  }
  if (search.kind == SearchKind::Kind::greedy) return greedy_search(problem, backend_order);
  if (search.kind == SearchKind::Kind::exhaustive) {
    if (problem.num_nodes() > options.exhaustive_max_nodes)
      throw UserError::option("search", "exhaustive", std::to_string(problem.num_nodes()) +
                                                    " nodes; exhaustive search takes at most " +
                                                    std::to_string(options.exhaustive_max_nodes));
    ExhaustiveResult r = exhaustive_search(problem);
    if (!r.complete) throw UserError::option("search", "exhaustive", "too many covers to enumerate; use collage");
    return std::move(r.result);
  }
  const std::string& target = search.backend;
  if (!find_spec(backends, target)) throw UserError::option("search", options.search, "backend '" + target + "' is not among the backends");
  std::string fallback;
  for (const BackendSpec& b : backends)
    if (b.all_ops && b.name != target && fallback.empty()) fallback = b.name;
  if (fallback.empty()) fallback = target;
  return single_backend_search(problem, target, fallback, budget);
}

// The plan's identity (model, search, cost model, the model's fingerprint and input shapes) and
// the backends' order; the cost model says now whether it can price every backend.
void start_plan(PartitionOutcome& out, const Graph& graph, const std::vector<BackendSpec>& backends,
                const CostModel& model, const PartitionOptions& options) {
  Plan& plan = out.plan;
  plan.model = options.model_path;
  plan.search = options.search;
  plan.cost_model = model.name();
  plan.model_fingerprint = model_fingerprint(graph);
  plan.input_shapes = model_input_shapes(graph);
  for (const BackendSpec& b : backends) out.backend_order.push_back(b.name);

  std::vector<BackendRef> refs;
  for (const BackendSpec& b : backends) refs.push_back({b.name, b.device});
  model.check_backends(refs);
}

// Every backend's partition rule, one slot per backend; the candidates in candidate_less order,
// without duplicates, the rules' statistics and limits merged into `out`.
std::vector<Candidate> run_partition_rules(PartitionOutcome& out, const std::vector<BackendSpec>& backends,
                                           const PartitionOptions& options) {
  const DataflowIndex& index = *out.index;
  std::vector<std::vector<Candidate>> per_backend(backends.size());
  std::vector<RuleStats> per_stats(backends.size());
  parallel_slots(options.threads, backends.size(), [&](size_t i) {
    PartitionRulePtr rule = backends[i].make_rule();
    RuleContext context{index, backends[i].name, per_stats[i]};
    per_backend[i] = rule->run(context);
  }, 2);
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < backends.size(); ++i) {
    out.rule_stats.merge(per_stats[i]);
    for (const std::string& l : per_stats[i].limits) out.limits.push_back(backends[i].name + ": " + l);
    for (Candidate& c : per_backend[i]) candidates.push_back(std::move(c));
  }
  sort_and_dedupe(candidates);
  return candidates;
}

// Each steering rule with the nodes it matched, as the plan reports them.
void record_steering(Plan& plan, const PartitionOptions& options, int num_nodes) {
  for (size_t r = 0; r < options.steering.rules().size(); ++r) {
    IndexSet nodes(num_nodes);
    for (NodeId n : options.steering.matched(r)) nodes.insert(n);
    plan.steering.push_back(PlanSteering{options.steering.rules()[r], std::move(nodes)});
  }
}

// A node no backend proposes a candidate for fails now, before anything is priced or measured.
void require_proposed(const Graph& graph, const DataflowIndex& index, const std::vector<Candidate>& candidates,
                      const std::vector<BackendSpec>& backends, const PartitionOptions& options) {
  IndexSet proposed(index.size());
  for (const Candidate& c : candidates) proposed |= c.inside();
  if (const int v = proposed.first_unset(); v < index.size()) {
    // The fix, when there is one: a backend that takes every op (ref) among the backends.
    const bool has_fallback = std::any_of(backends.begin(), backends.end(), [](const BackendSpec& b) { return b.all_ops; });
    throw UserError(options.model_path, "node '" + graph.node(v).name + "'",
                    "no backend given can take op " + graph.node(v).op + (has_fallback ? "" : " (add ref, which takes every op)"));
  }
}

// Candidates: the dataflow index, the rules' candidates, steered; every node must have one.
std::vector<Candidate> propose_candidates(PartitionOutcome& out, const Graph& graph,
                                          const std::vector<BackendSpec>& backends, const PartitionOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  out.index = std::make_unique<DataflowIndex>(graph);
  std::vector<Candidate> candidates = run_partition_rules(out, backends, options);
  candidates = steer_candidates(std::move(candidates), options.steering, graph, options.model_path);
  record_steering(out.plan, options, out.index->size());
  out.plan.stats.enumerate_ms = ms_since(t0);
  require_proposed(graph, *out.index, candidates, backends, options);
  return candidates;
}

// When the cost model prices layouts: each backend's boundary layout, and the price of every
// conversion between them the search may need.
void price_layout_conversions(PartitionOutcome& out, const Graph& graph, const std::vector<BackendSpec>& backends,
                              const CostModel& model, const PartitionOptions& options) {
  SearchProblem& problem = out.problem;
  std::set<Layout> layouts;
  for (const BackendSpec& b : backends) {
    problem.backend_layouts[b.name] = b.detail().boundary_layout;
    layouts.insert(b.detail().boundary_layout);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto prices = std::make_shared<ConversionPrices>(
      price_conversions(graph, layouts, model, {options.threads, options.database}));
  out.plan.stats.estimate_ms += ms_since(t0);
  out.plan.stats.costed += static_cast<int64_t>(prices->stats.unique);
  problem.conversion_price = [prices](const TensorType& t, Layout from, Layout to) { return (*prices)(t, from, to); };
}

// A node whose every candidate has no price (unknown or invalid) fails, with the first reason.
void require_priced(const SearchProblem& problem, const Graph& graph, const PartitionOptions& options) {
  for (int v = 0; v < problem.index->size(); ++v) {
    if (!problem.by_node[size_t(v)].empty()) continue;
    const Node& node = graph.node(v);
    std::string why = "no backend given can take op " + node.op;
    for (size_t c = 0; c < problem.candidates.size(); ++c)
      if (problem.candidates[c].inside().contains(v) && !problem.costs[c].is_value()) {
        why = "no backend can take op " + node.op + " (" + problem.candidates[c].backend + ": " +
              problem.costs[c].to_string() + ")";
        break;
      }
    throw UserError(options.model_path, "node '" + node.name + "'", why);
  }
}

// Functions and costs: the candidates priced, and the search problem they make.
void build_problem(PartitionOutcome& out, const Graph& graph, const std::vector<BackendSpec>& backends,
                   const CostModel& model, const PartitionOptions& options, std::vector<Candidate> candidates) {
  Plan& plan = out.plan;
  const auto t0 = std::chrono::steady_clock::now();
  PricedCandidates priced = price_candidates(graph, backends, model, options, candidates);
  out.estimate_stats = priced.stats;
  plan.stats.estimate_ms = ms_since(t0);
  plan.stats.candidates = static_cast<int64_t>(candidates.size());
  plan.stats.costed = static_cast<int64_t>(priced.stats.unique);

  SearchProblem& problem = out.problem;
  problem.index = out.index.get();
  problem.candidates = std::move(candidates);
  problem.costs = std::move(priced.costs);
  problem.devices = std::move(priced.devices);
  problem.errors = std::move(priced.errors);
  problem.transfer_model = &model;
  problem.boundary_model = &model;
  if (model.prices_layouts()) price_layout_conversions(out, graph, backends, model, options);
  problem.prepare();
  require_priced(problem, graph, options);
}

// The search over the problem; a problem with no acyclic cover fails here.
void search_plan(PartitionOutcome& out, const std::vector<BackendSpec>& backends, const PartitionOptions& options) {
  Plan& plan = out.plan;
  out.search = run_search(out.problem, backends, out.backend_order, options);
  plan.stats.search_ms = out.search.stats.ms;
  plan.stats.states = out.search.stats.states;
  plan.stats.states_pushed = out.search.stats.pushed;
  plan.stats.states_popped = out.search.stats.popped;
  if (!out.search.found)
    throw UserError(options.model_path, "", "no acyclic plan covers every node with backends " + [&] {
      std::string s;
      for (const std::string& b : out.backend_order) s += (s.empty() ? "" : ",") + b;
      return s;
    }() + " and search " + options.search);
}

// Partitions: the chosen candidates, touching ones of one backend coalesced.
void make_partitions(PartitionOutcome& out, const PartitionOptions& options) {
  Plan& plan = out.plan;
  const auto t0 = std::chrono::steady_clock::now();
  plan.partitions = partitions_from_choice(out.problem, out.search.chosen);
  if (options.coalesce) plan.partitions = coalesce_partitions(*out.index, std::move(plan.partitions));
  plan.stats.coalesce_ms = ms_since(t0);
}

// Measured wholes (measured_wholes.h): price coalesced partitions as they run, search again; then
// charge the partitions that run the price of their wholes, those of the last round priced now.
void price_wholes(PartitionOutcome& out, const Graph& graph, const std::vector<BackendSpec>& backends,
                  const CostModel& model, const PartitionOptions& options) {
  SearchProblem& problem = out.problem;
  Plan& plan = out.plan;
  for (int round = 0; options.coalesce && options.measure_wholes && round < options.max_whole_rounds; ++round) {
    std::vector<Candidate> wholes = whole_candidates(problem, plan.partitions);
    if (wholes.empty()) break;
    PricedCandidates whole_costs = price_candidates(graph, backends, model, options, wholes);
    plan.stats.wholes += static_cast<int64_t>(wholes.size());
    plan.stats.costed += static_cast<int64_t>(whole_costs.stats.unique);
    add_candidates(problem, std::move(wholes), std::move(whole_costs.costs), std::move(whole_costs.devices),
                   std::move(whole_costs.errors));
    plan.stats.candidates = static_cast<int64_t>(problem.candidates.size());
    out.search = run_search(problem, backends, out.backend_order, options);
    plan.stats.search_ms += out.search.stats.ms;
    plan.stats.states += out.search.stats.states;
    plan.stats.states_pushed += out.search.stats.pushed;
    plan.stats.states_popped += out.search.stats.popped;
    TESSERA_CHECK(out.search.found, "measured wholes: adding candidates lost the plan");
    plan.partitions = coalesce_partitions(*out.index, partitions_from_choice(problem, out.search.chosen));
  }
  if (options.coalesce && options.measure_wholes) {
    // What runs: coalesced partitions cost their wholes, those of the last round priced now.
    std::vector<Candidate> last = whole_candidates(problem, plan.partitions);
    PricedCandidates last_costs;
    if (!last.empty()) {
      last_costs = price_candidates(graph, backends, model, options, last);
      plan.stats.wholes += static_cast<int64_t>(last.size());
      plan.stats.costed += static_cast<int64_t>(last_costs.stats.unique);
    }
    charge_wholes(problem, plan.partitions, last, last_costs.costs);
    split_unrunnable_wholes(problem, plan.partitions, last, last_costs.costs);
  }
}

// The plan's prices: transfers, boundaries and their crossings, and the total.
void price_plan(PartitionOutcome& out) {
  Plan& plan = out.plan;
  const SearchProblem& problem = out.problem;
  plan.transfer_cost = out.search.transfer;
  plan.boundary_cost = out.search.boundary;
  for (BoundaryCrossing& b : plan_crossings(problem, out.search.chosen).boundaries)
    plan.boundaries.push_back({b.value, problem.backend_names[size_t(b.from)], problem.backend_names[size_t(b.to)],
                               static_cast<int64_t>(b.bytes), std::move(b.cost)});
  plan.total_cost = Cost::zero();
  for (const Partition& p : plan.partitions) plan.total_cost += p.cost;
  plan.total_cost += plan.transfer_cost;
  plan.total_cost += plan.boundary_cost;
}

// A plan the exact search could not prove optimal says how far from a lower bound it may be.
void note_optimality(PartitionOutcome& out) {
  Plan& plan = out.plan;
  if (const SearchBound& bound = out.search.bound; !bound.proven) {
    const double gap = std::max(0.0, plan.total_cost.number() - bound.lower_bound.number());
    plan.optimality = PlanOptimality{bound.fallback, bound.lower_bound, Cost::value(gap), bound.memory_budget};
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", plan.total_cost.number() > 0 ? 100.0 * gap / plan.total_cost.number() : 0.0);
    out.limits.push_back("search: the exact search needs more than " + std::to_string(bound.memory_budget >> 20) +
                         " MB (search_memory); fell back to the " + bound.fallback +
                         " search: the plan is not proven optimal, its total is within " +
                         display_cost(plan.optimality->gap, plan.cost_model) + " (" + share + ") of a lower bound");
  }
}

// The plan as it is written: function hashes, partitions in their final order, prices, optimality.
void finish_plan(PartitionOutcome& out, const Graph& graph, const PartitionOptions& options) {
  Plan& plan = out.plan;
  const DataflowIndex& index = *out.index;
  parallel_slots(options.threads, plan.partitions.size(), [&](size_t i) {
    plan.partitions[i].function_hash = structural_hash(extract_function(graph, SubGraph(index, plan.partitions[i].nodes)));
  });
  finalize_plan_order(plan, graph);
  price_plan(out);
  note_optimality(out);
}

}  // namespace

PartitionOutcome partition_graph(const Graph& graph, const std::vector<BackendSpec>& backends,
                                 const CostModel& model, const PartitionOptions& options) {
  SearchKind::parse_or_throw(options.search);
  if (backends.empty()) throw UserError::option("backends", "", "no backends given");
  PartitionOutcome out;
  start_plan(out, graph, backends, model, options);
  std::vector<Candidate> candidates = propose_candidates(out, graph, backends, options);
  build_problem(out, graph, backends, model, options, std::move(candidates));
  search_plan(out, backends, options);
  make_partitions(out, options);
  price_wholes(out, graph, backends, model, options);
  finish_plan(out, graph, options);
  return out;
}

}  // namespace tessera
