// Plan: what the search chose, after coalescing (docs/design.md), and its `tessera.plan` JSON (v1).
//
// Terms. A Plan is a list of Partitions covering every node of the model exactly once. A
// Partition is one backend's share of the graph that becomes one outlined function: the union of
// the candidates the search chose for it (one, or several touching ones of the same backend merged
// by coalescing). Each chosen candidate keeps its own inside set, rule name, cost and composites,
// so emit can build the inner `Composite` functions and --explain can show where a cost came from.
//
//   search picks  byoc{r0,r1} (rule byoc.fusion, 1.9)   byoc{r2,s,r3} (2.71)   tvm{a} (2.0)
//   coalesce  ->  Partition byoc {r0,r1,r2,s,r3}, cost 4.61, candidates [{r0,r1}, {r2,s,r3}],
//                 function "tvmgen_default_byoc_main_0"
//                 Partition tvm {a}, cost 2.0, function "tvmgen_default_tvm_main_1"
//
// Partition order: a topological order of the partition DAG (producers first), ties broken by the
// smallest node index, so the order is unique and emit can call functions in plan order.
// Function names: "tvmgen_default_<backend>_main_<k>", k counting distinct functions in partition
// order; structurally equal partitions on one backend (equal `function_hash`) share a name, and
// the emitted module has one function per name.
//
// JSON (docs/design.md):
//   {"format": "tessera.plan", "version": 1, "model": ..., "search": ..., "cost_model": ...,
//    "total_cost": 34.5706, "transfer_cost": 0.0, "boundary_cost": 0.0,
//    "partitions": [{"backend", "nodes": [names], "cost", "function", + extensions:
//                    "device", "function_hash" (16 hex digits),
//                    "candidates": [{"nodes", "rule", "cost", "composites": [{"name",
//                                    "pattern", "nodes"}]}]}],
//    "boundaries": [{"value", "from", "to", "bytes", "cost"}],
//    ["isolated_total_cost" at the top and "isolated_cost" in each partition: only for a plan
//     priced in the plan (in_plan_prices.h); "cost" is then the in-plan price],
//    ["steering": [{"kind": "pin"|"forbid", "selector", "backend", "nodes": [names]}]: only when
//     --pin/--forbid steered the plan (steering.h); each rule with the nodes it matched],
//    ["verified": {"chosen": "collage", "latency_ms": {"collage": 12.3, "single:onednn": 12.9}}],
//    ["tuned_on": {"threads": 1, "cpu": "AMD EPYC", "machine": "AMD EPYC/isa-3f9c01d2"}: only for
//     plans priced by measurement; where and at how many compute threads (machine.h)],
//    "stats": {"candidates", "states", "search_ms", + extensions},
//    ["accuracy": {...} only when the plan was made under an accuracy budget (PlanAccuracy)],
//    ["quantization": {...} only when an int8 precision variant was offered (PlanQuantization)]}
// Byte-identical for equal Plans: keys in a fixed order, two-space indentation, nodes named by
// Graph node names in model order, numbers via format_plan_number (below). Timings are the only
// run-dependent fields, so the writer puts 0.0 in every *_ms field unless `with_timings` is set:
// that is what keeps `-j 1` and `-j 2` plans byte-identical. Non-Value costs are written as the
// strings "unknown" / "invalid(reason)" (Cost::to_string) and read back by Cost::parse.
//
// Binding to the model (fields added to v1; a plan without them is accepted unchecked, so plans
// written before them and hand-written plans still load):
//   "model_fingerprint": 16 hex digits, model_fingerprint(graph) of the Graph the plan was made
//                        for (structural: ops, attributes, types, wiring, small constants; not
//                        node names, not weight values, so regenerated weights keep the plan),
//   "input_shapes": {"x": [1, 3, 224, 224], ...} in graph-input order.
// The writer always writes them from the `graph` it is given; the reader checks them against its
// `graph` (check_plan_binding) and refuses a plan for other shapes or another model with one line
// saying which and how they differ. Shapes are checked first: they are the usual mistake (a
// symbolic dimension bound differently) and the only one the user can fix with --input-shape.
//
// Shape ranges (shape_range.h): a file with "buckets" is read for the graph's shapes: the bucket
// that covers them is chosen and its plan read; at a bucket's own shapes exactly as above, at a
// shape between buckets without the fingerprint (which hashes shape-dependent constants) and
// leniently about nodes the import folded away at one shape and not the other (every node of
// the graph must still be in a partition). The Plan keeps the set (Plan::shape_set).
//
// The reader needs the model's Graph to turn node names back into an IndexSet; it checks the
// format, version, that every name exists and that no node is in two partitions, and throws
// UserError("FILE: PLACE: WHAT") otherwise. It does not re-check convexity or acyclicity
// (plan_check.h in search/ does, for tests and `tessera run`).
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/cost.h"
#include "tessera/graph.h"
#include "tessera/index_set.h"

namespace tessera {

struct PlanSet;   // src/search/shape_range.h

// A pattern match a backend implements as one fused kernel, inside a chosen candidate: emit wraps
// it as an inner `Composite` function named after the pattern.
//   composite "onednn.conv_bias_relu" {0,1,2}   (pattern "Relu(Add(Conv(*, const), const))")
struct Composite {
  std::string name;       // "byoc.conv_bias_relu": the spec's pattern name
  std::string pattern;    // the pattern's text, for debug output
  IndexSet inside;        // the matched op nodes

  bool operator==(const Composite& o) const { return name == o.name && inside == o.inside; }
  std::strong_ordering operator<=>(const Composite& o) const;
};

// A steering rule: pin a node (or every node its selector matches) to a backend, or forbid the
// backend there (TuneOptions::steering; the CLI's `--pin SELECTOR=BACKEND` and
// `--forbid SELECTOR=BACKEND`). Selectors: a node name, "op:TYPE" or a glob over node names.
struct SteeringRule {
  enum class Kind { pin, forbid };
  Kind kind = Kind::pin;
  std::string selector;   // node name, "op:TYPE" or a glob over node names
  std::string backend;

  // "pin" or "forbid": the option's name in the library and in Python (the CLI's --pin / --forbid).
  std::string kind_name() const { return kind == Kind::pin ? "pin" : "forbid"; }
  std::string text() const { return selector + "=" + backend; }   // SELECTOR=BACKEND
  bool operator==(const SteeringRule&) const = default;
};

// One candidate the search chose, as it sits inside a partition.
struct ChosenCandidate {
  IndexSet nodes;
  std::string rule;                    // debug name of the rule that proposed it
  Cost cost;
  std::vector<Composite> composites;   // pattern matches inside, sorted, disjoint
};

struct Partition {
  std::string backend;
  std::string device;                  // the backend's device ("cpu" for every built-in)
  IndexSet nodes;                      // union of the candidates' nodes
  Cost cost;                           // sum of the candidates' costs
  std::vector<ChosenCandidate> candidates;   // ascending by nodes (IndexSet order)
  std::string function;                // "tvmgen_default_<backend>_main_<k>"
  uint64_t function_hash = 0;          // structural hash of the extracted partition function
  // Priced in the plan (in_plan_prices.h): `cost` is the partition's time inside the plan, and
  // this what the search priced it at (the candidates' sum, or its measured whole). Unset otherwise.
  std::optional<Cost> isolated_cost;
};

// Search statistics. Counts are deterministic; *_ms are wall-clock and written only on request.
struct SearchStats {
  int64_t candidates = 0;        // candidates given to the search (all backends, after dedupe)
  int64_t states = 0;            // distinct search states reached (collage: settled states)
  int64_t states_pushed = 0;     // priority-queue pushes
  int64_t states_popped = 0;     // priority-queue pops (including stale entries)
  int64_t costed = 0;            // distinct (function, backend) cost requests
  int64_t wholes = 0;            // coalesced partitions priced as wholes (measured_wholes.h)
  double enumerate_ms = 0.0;     // candidate enumeration
  double estimate_ms = 0.0;      // costing (extract + hash + estimate)
  double search_ms = 0.0;        // the search proper
  double coalesce_ms = 0.0;
};

// A value handed from a function on one backend to a function on another (docs/design.md
// "Crossings"): listed once per (value, consuming backend), priced or not.
struct Boundary {
  ValueId value = kNoValue;
  std::string from;              // producer's backend
  std::string to;                // consumer's backend
  int64_t bytes = 0;             // the value's static size
  Cost cost;
};

// What an accuracy budget (--max-rel-error E > 0) decided and verified; absent from fp32 plans.
// JSON: "accuracy": {"max_rel_error", "calibration", "verified_error", "proxy_error", "rounds",
// "samples", "sample_errors", "bound"[, "fallback"][, "stayed_fp32"]}, after "stats"
// (src/runtime/budgeted_partition.h has the method). verified_error is the end-to-end error of this very plan, also when end-to-end verification (verified_choice.h)
// picked a single-backend contender over the search's plan; rounds is 0 for such a contender
// (it was not searched under the budget, only verified against it) and its proxy_error is 0.
struct PlanAccuracy {
  double max_rel_error = 0.0;    // the budget E
  std::string calibration;       // "seeded:<seed>" or "npy:<16 hex digits>" (hash of the inputs used)
  double verified_error = 0.0;   // end-to-end relative L2 error vs fp32 ref on those inputs, max over outputs
  double proxy_error = 0.0;      // sum of the measured (or prior) errors of the plan's reduced candidates
  int64_t rounds = 0;            // search + verify rounds (1 + tightenings)
  // Where an int8 variant was offered: each convolution or matmul it could quantize (a source with
  // a calibrated range) that the plan runs in fp32, with why (no int8 candidate; its least int8
  // error over the budget; or not chosen). JSON: "stayed_fp32": [[node name, why], ...] at the
  // end of "accuracy", only when not empty.
  std::vector<std::pair<std::string, std::string>> stayed_fp32;
  // On what data verified_error was measured: how many calibration samples the plan ran on
  // (src/runtime/calibration_samples.h: seeded calibration draws 4), each sample's error, and the
  // rule that makes verified_error of them ("largest" for one sample, "max(largest, mean + 2 sd)"
  // for several: sample_bound in src/runtime/budgeted_partition.h). JSON: "samples",
  // "sample_errors", "bound" after "rounds"; absent from plans that predate them (samples 0).
  int64_t samples = 0;
  std::vector<double> sample_errors;
  std::string bound;
  // Why the plan is the fp32 backends' alone although reduced-precision candidates were offered:
  // every round's plan failed verification (how many rounds, their least error, the target).
  // JSON: "fallback" after "bound", only when set.
  std::string fallback;
};

// The calibrated activation ranges an int8 precision variant (onednn_int8) quantizes with,
// computed from the budget's calibration inputs; absent when no int8 variant was offered.
// Consumers put them back on the model (Value::range) before extracting functions
// (src/ir/calibrated_ranges.h), so `run`, Python and C++ rebuild exactly the priced functions.
// JSON: "quantization": {"method": "minmax" | "percentile:<p>", "ranges": [[value name, min, max],
// ...]} after "accuracy", in graph value order; min <= max, finite. Then, where the int8 results
// are bias-corrected (src/runtime/int8_bias_correction.h), "bias_shifts": [[value name, [s0, s1,
// ...]], ...]: per int8 anchor's output value, what its int8 result subtracts per output channel
// (Value::int8_bias_shift); absent when empty.
struct PlanQuantization {
  std::string method;
  std::vector<std::pair<std::string, std::pair<float, float>>> ranges;
  std::vector<std::pair<std::string, std::vector<float>>> bias_shifts;
};

// Written only when the search could not prove its plan optimal within its memory budget
// (src/search/bounded_search.h). JSON: "optimality": {"proven": false, "fallback", "lower_bound",
// "gap", "memory_budget_mb"}, after "stats": total_cost - gap >= lower_bound, a bound on every
// plan's total under the same costs.
struct PlanOptimality {
  std::string fallback;          // "layout-blind", "beam" or "greedy"
  Cost lower_bound;
  Cost gap;                      // total_cost - lower_bound, at least 0
  size_t memory_budget = 0;      // bytes the exact search was given
};

// A --pin / --forbid the plan obeyed (steering.h), with the nodes its selector matched.
struct PlanSteering {
  SteeringRule rule;
  IndexSet nodes;
};

// Where a measured plan's prices come from: its choices hold at this thread count on this
// machine (`run` warns when either differs).
struct PlanMachine {
  int threads = 1;
  std::string cpu;               // cpu_model_name()
  std::string machine;           // machine_fingerprint(): CPU model and a hash of its ISA flags
};

struct Plan {
  std::string model;             // the model path as given to the CLI
  std::string search;            // "collage", "greedy", "single:onednn", "exhaustive"
  std::string cost_model;        // CostModel::name(): "mock", "roofline", "measure"
  Cost total_cost;               // sum of partition costs + transfer_cost + boundary_cost
  Cost transfer_cost;            // values crossing devices; zero when all on one device
  Cost boundary_cost;            // values crossing backends; zero when the model prices none
  std::vector<Partition> partitions;
  std::vector<Boundary> boundaries;   // ascending by (value id, consuming backend)
  // End-to-end check against single-backend plans (verified_choice.h); empty when not done.
  std::string verified_choice;                                  // label of the plan chosen
  std::vector<std::pair<std::string, double>> verified_ms;      // (contender, latency ms), in order
  std::vector<PlanSteering> steering;   // rules given order; empty when unsteered
  std::optional<PlanMachine> tuned_on;  // only for plans priced by measurement
  SearchStats stats;
  // The model it was made for (see "Binding to the model" above); empty when the plan file did
  // not say (read from an older or hand-written plan).
  std::string model_fingerprint;
  std::vector<std::pair<std::string, Shape>> input_shapes;
  std::optional<PlanAccuracy> accuracy;   // only for plans made under an accuracy budget
  std::optional<PlanQuantization> quantization;   // only where an int8 variant was offered
  std::optional<PlanOptimality> optimality;   // only for plans not proven optimal
  // Priced in the plan (in_plan_prices.h): total_cost is what it runs, this what the search saw.
  std::optional<Cost> isolated_total_cost;
  // Read from a plan file made over shape ranges (shape_range.h): its buckets, and the bucket this
  // plan is (chosen for the graph it was read against). Null for a plan for one shape.
  std::shared_ptr<const PlanSet> shape_set;
  size_t bucket = 0;
  // False when the graph's shapes are not the ones this bucket's plan was tuned at (a shape
  // between buckets): its costs are the bucket's, the assignment is run at the graph's shapes.
  bool bucket_exact = true;
};

struct PlanJsonOptions {
  bool with_timings = false;     // write real *_ms values (makes the output run-dependent)
};

// The fixed number format of plan files: "%.10g" (10 significant digits, enough for costs and
// immune to last-bit noise), with ".0" appended when the text has no '.', 'e', "inf" or "nan".
// 34.5706 -> "34.5706", 0 -> "0.0", 1.25e-07 -> "1.25e-07", 24.570600000000002 -> "24.5706".
std::string format_plan_number(double x);

// Sorts partitions into partition order (topological over the partition DAG, ties by first node)
// and assigns `function` names from `function_hash`. Requires an acyclic partition DAG.
void finalize_plan_order(Plan& plan, const Graph& graph);

// The model's fingerprint: hash_hex(structural_hash(graph)) (structural_hash.h).
std::string model_fingerprint(const Graph& graph);
// The graph's inputs with their shapes, in graph-input order.
std::vector<std::pair<std::string, Shape>> model_input_shapes(const Graph& graph);
// Throws UserError("FILE: input_shapes.NAME|model_fingerprint: WHAT") when `plan` records a model
// other than `graph` (other input shapes, other inputs, another fingerprint); nothing when the
// plan records none. `file` names the plan in the message.
void check_plan_binding(const Plan& plan, const Graph& graph, const std::string& file);
// A cycle among the plan's partitions (a partition reading, through others, what it makes itself:
// no order runs them), in words: "partitions[0] -> partitions[2] -> partitions[0]"; nullopt when
// there is none. Reading a plan file refuses such a plan; so does a Session given one in memory.
std::optional<std::string> partition_cycle(const Plan& plan, const Graph& graph);

// The "input_shapes" a plan file records, read without a model (to bind a model's symbolic
// dimensions before the plan is read against it); empty when the file has none or cannot be read
// (read_plan_file then says what is wrong).
std::vector<std::pair<std::string, Shape>> read_plan_input_shapes(const std::string& path);

// The JSON text (ends with a newline). Node names come from `graph`.
std::string plan_to_json_text(const Plan& plan, const Graph& graph, const PlanJsonOptions& options = {});
nlohmann::json plan_to_json(const Plan& plan, const Graph& graph, const PlanJsonOptions& options = {});

// Inverse of plan_to_json for the fields above; `file` names the source in error messages.
Plan plan_from_json(const nlohmann::json& j, const std::string& file, const Graph& graph);
// A plan for one shape read for `graph` at other shapes of the same model, as a bucket's plan is
// read between buckets (above): no binding check, node names the graph lacks dropped.
Plan plan_at_other_shapes(const nlohmann::json& j, const std::string& file, const Graph& graph);
Plan read_plan_file(const std::string& path, const Graph& graph);
// Writes atomically (temporary file + rename), so a failed run never leaves a partial plan.
void write_plan_file(const std::string& path, const Plan& plan, const Graph& graph,
                     const PlanJsonOptions& options = {});
// The same for a plan's text made elsewhere (shape_range.h: a plan file over shape ranges).
void write_plan_text_file(const std::string& path, const std::string& text);

}  // namespace tessera
