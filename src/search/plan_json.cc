// The `tessera.plan` v1 writer and reader (include/tessera/plan.h).
//
// The writer builds the text by hand rather than through nlohmann::json::dump so that key order
// and number format are fixed by this file alone (dump would print 24.570600000000002).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <type_traits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <unistd.h>

#include "tessera/error.h"
#include "tessera/plan.h"
#include "search/shape_range.h"
#include "search/cost_display.h"
#include "search/plan_json_precision.h"
#include "ir/structural_hash.h"
#include "support/text.h"

namespace tessera {

namespace plan_json {

const nlohmann::json& field(const nlohmann::json& obj, const char* key, const std::string& file,
                            const std::string& place) {
  if (!obj.is_object()) throw UserError(file, place, "expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) throw UserError(file, place.empty() ? key : place + "." + key, "missing");
  return *it;
}

std::string read_string(const nlohmann::json& obj, const char* key, const std::string& file,
                        const std::string& place) {
  const auto& v = field(obj, key, file, place);
  if (!v.is_string()) throw UserError(file, place.empty() ? key : place + "." + key, "expected a string");
  return v.get<std::string>();
}

}  // namespace plan_json

namespace {

using plan_json::field;
using plan_json::read_string;

std::string quote(const std::string& s) { return nlohmann::json(s).dump(); }

std::string cost_text(const Cost& c) {
  return c.is_value() ? format_plan_number(c.number()) : quote(c.to_string());
}

std::string node_list(const IndexSet& nodes, const Graph& graph) {
  std::string out = "[";
  bool first = true;
  nodes.for_each([&](int n) {
    if (!first) out += ", ";
    first = false;
    out += quote(graph.node(n).name);
  });
  return out + "]";
}

// A partition's producers among the other partitions (owner[n] = partition of node n).
std::vector<std::vector<int>> partition_edges(const std::vector<Partition>& parts, const Graph& graph) {
  std::vector<int> owner(static_cast<size_t>(graph.num_nodes()), -1);
  for (size_t p = 0; p < parts.size(); ++p) parts[p].nodes.for_each([&](int n) { owner[size_t(n)] = int(p); });
  std::vector<std::vector<int>> preds(parts.size());
  for (int n = 0; n < graph.num_nodes(); ++n) {
    int to = owner[size_t(n)];
    if (to < 0) continue;
    for (ValueId v : graph.node(n).inputs) {
      if (v == kNoValue) continue;
      NodeId prod = graph.value(v).producer;
      if (prod == kNoNode) continue;
      int from = owner[size_t(prod)];
      if (from >= 0 && from != to) preds[size_t(to)].push_back(from);
    }
  }
  return preds;
}

Cost read_cost(const nlohmann::json& j, const std::string& file, const std::string& place) {
  if (j.is_number()) {
    double x = j.get<double>();
    if (!(x >= 0)) throw UserError(file, place, "a cost must be a non-negative number");
    return Cost::value(x);
  }
  if (j.is_string()) {
    // "inf" parses as a cost but is no plan's: it would be written back as bare `inf`, not JSON.
    if (auto c = Cost::parse(j.get<std::string>()); c && (!c->is_value() || std::isfinite(c->number()))) return *c;
  }
  throw UserError(file, place, "expected a cost (a number, \"unknown\" or \"invalid(...)\")");
}

// `lenient`: a name the model lacks is skipped (a bucket's plan read at another shape, whose
// import folded that node away).
IndexSet read_nodes(const nlohmann::json& j, const std::string& file, const std::string& place,
                    const Graph& graph, const std::map<std::string, int>& by_name, bool lenient) {
  if (!j.is_array()) throw UserError(file, place, "expected a list of node names");
  IndexSet set(graph.num_nodes());
  for (size_t i = 0; i < j.size(); ++i) {
    std::string where = place + "[" + std::to_string(i) + "]";
    if (!j[i].is_string()) throw UserError(file, where, "expected a node name");
    auto it = by_name.find(j[i].get<std::string>());
    if (it == by_name.end() && lenient) continue;
    if (it == by_name.end()) throw UserError(file, where, "no node '" + j[i].get<std::string>() + "' in the model");
    set.insert(it->second);
  }
  return set;
}

// "model_fingerprint" and "input_shapes", when the file has them.
void read_binding(const nlohmann::json& j, const std::string& file, Plan& plan) {
  if (j.contains("model_fingerprint")) {
    plan.model_fingerprint = read_string(j, "model_fingerprint", file, "");
    if (plan.model_fingerprint.size() != 16 ||
        plan.model_fingerprint.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw UserError(file, "model_fingerprint", "expected 16 lower-case hex digits");
  }
  if (!j.contains("input_shapes")) return;
  const auto& shapes = j["input_shapes"];
  if (!shapes.is_object()) throw UserError(file, "input_shapes", "expected an object {name: [dims]}");
  for (const auto& [name, dims] : shapes.items()) {
    const std::string place = "input_shapes." + name;
    if (!dims.is_array()) throw UserError(file, place, "expected a list of dimensions");
    Shape shape;
    for (const auto& d : dims) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) throw UserError(file, place, "expected non-negative integers");
      shape.push_back(d.get<int64_t>());
    }
    plan.input_shapes.emplace_back(name, std::move(shape));
  }
}

std::string binding_text(const std::string& name, const Shape& shape) { return name + "=" + shape_to_string(shape); }

}  // namespace

std::string model_fingerprint(const Graph& graph) { return hash_hex(structural_hash(graph)); }

std::vector<std::pair<std::string, Shape>> model_input_shapes(const Graph& graph) {
  std::vector<std::pair<std::string, Shape>> out;
  for (ValueId v : graph.inputs) out.emplace_back(graph.value(v).name, graph.value(v).type.shape);
  return out;
}

void check_plan_binding(const Plan& plan, const Graph& graph, const std::string& file) {
  const std::string model = graph.source.empty() ? std::string("the model") : "the model " + graph.source;
  if (!plan.input_shapes.empty()) {
    std::map<std::string, Shape> has;
    for (const auto& [name, shape] : model_input_shapes(graph)) has[name] = shape;
    for (const auto& [name, shape] : plan.input_shapes) {
      auto it = has.find(name);
      if (it == has.end())
        throw UserError(file, "input_shapes." + name, "the plan was made for a model with input '" + name + "'; " +
                                                          model + " has no such input (a plan for another model)");
      if (it->second != shape)
        throw UserError::mentioning(file, "input_shapes." + name,
                                    "the plan was made for " + binding_text(name, shape) + ", " + model + " has " +
                                        binding_text(name, it->second) + " (load the model with " +
                                        mention("input_shapes", {{name, shape}}) + ", or make a plan for these shapes)");
      has.erase(it);
    }
    if (!has.empty())
      throw UserError(file, "input_shapes", "the plan was made for a model without input '" + has.begin()->first +
                                                "', which " + model + " has (a plan for another model)");
  }
  if (!plan.model_fingerprint.empty()) {
    const std::string actual = model_fingerprint(graph);
    if (actual != plan.model_fingerprint)
      throw UserError(file, "model_fingerprint",
                      "the plan was made for another model (fingerprint " + plan.model_fingerprint + ", " + model +
                          " has " + actual + "; plan's model field: " + plan.model +
                          "; a plan made from a model imported without simplification runs only on a model imported so, "
                          "and one made before import simplified ONNX graphs must be made again)");
  }
}

std::string format_plan_number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", x == 0.0 ? 0.0 : x);
  std::string s = buf;
  if (s.find_first_of(".einn") == std::string::npos) s += ".0";
  return s;
}

void finalize_plan_order(Plan& plan, const Graph& graph) {
  auto& parts = plan.partitions;
  std::sort(parts.begin(), parts.end(), [](const Partition& a, const Partition& b) { return a.nodes.first() < b.nodes.first(); });
  // Kahn's algorithm, always taking the ready partition with the smallest first node.
  auto preds = partition_edges(parts, graph);
  std::vector<int> missing(parts.size(), 0);
  std::vector<std::vector<int>> succs(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    std::sort(preds[p].begin(), preds[p].end());
    preds[p].erase(std::unique(preds[p].begin(), preds[p].end()), preds[p].end());
    missing[p] = static_cast<int>(preds[p].size());
    for (int q : preds[p]) succs[size_t(q)].push_back(int(p));
  }
  std::vector<int> ready, order;
  for (size_t p = 0; p < parts.size(); ++p)
    if (missing[p] == 0) ready.push_back(int(p));
  while (!ready.empty()) {
    auto it = std::min_element(ready.begin(), ready.end());
    int p = *it;
    ready.erase(it);
    order.push_back(p);
    for (int s : succs[size_t(p)])
      if (--missing[size_t(s)] == 0) ready.push_back(s);
  }
  TESSERA_CHECK(order.size() == parts.size(), "finalize_plan_order: the partition DAG has a cycle");
  std::vector<Partition> sorted;
  sorted.reserve(parts.size());
  for (int p : order) sorted.push_back(std::move(parts[size_t(p)]));
  parts = std::move(sorted);
  std::map<std::pair<std::string, uint64_t>, std::string> names;
  for (auto& p : parts) {
    auto key = std::make_pair(p.backend, p.function_hash);
    auto it = names.find(key);
    if (it == names.end())
      it = names.emplace(key, "tvmgen_default_" + p.backend + "_main_" + std::to_string(names.size())).first;
    p.function = it->second;
  }
}

std::string plan_to_json_text(const Plan& plan, const Graph& graph, const PlanJsonOptions& options) {
  std::ostringstream o;
  auto ms = [&](double x) { return format_plan_number(options.with_timings ? x : 0.0); };
  o << "{\"format\": \"tessera.plan\", \"version\": 1, \"model\": " << quote(plan.model)
    << ", \"search\": " << quote(plan.search) << ", \"cost_model\": " << quote(plan.cost_model)
    << ", \"cost_unit\": " << quote(cost_is_seconds(plan.cost_model) ? "seconds" : "model units") << ",\n";
  o << " \"model_fingerprint\": " << quote(model_fingerprint(graph)) << ", \"input_shapes\": {";
  const auto shapes = model_input_shapes(graph);
  for (size_t i = 0; i < shapes.size(); ++i) {
    o << (i ? ", " : "") << quote(shapes[i].first) << ": [";
    for (size_t d = 0; d < shapes[i].second.size(); ++d) o << (d ? ", " : "") << shapes[i].second[d];
    o << "]";
  }
  o << "},\n";
  o << " \"total_cost\": " << cost_text(plan.total_cost) << ", \"transfer_cost\": " << cost_text(plan.transfer_cost)
    << ", \"boundary_cost\": " << cost_text(plan.boundary_cost) << ",\n";
  if (plan.isolated_total_cost) o << " \"isolated_total_cost\": " << cost_text(*plan.isolated_total_cost) << ",\n";
  o << " \"partitions\": [";
  for (size_t i = 0; i < plan.partitions.size(); ++i) {
    const Partition& p = plan.partitions[i];
    o << (i ? ",\n  " : "\n  ");
    o << "{\"backend\": " << quote(p.backend) << ", \"device\": " << quote(p.device)
      << ", \"nodes\": " << node_list(p.nodes, graph) << ",\n   \"cost\": " << cost_text(p.cost);
    if (p.isolated_cost) o << ", \"isolated_cost\": " << cost_text(*p.isolated_cost);
    o << ", \"function\": " << quote(p.function) << ", \"function_hash\": " << quote(hash_hex(p.function_hash))
      << ",\n   \"candidates\": [";
    for (size_t c = 0; c < p.candidates.size(); ++c) {
      const ChosenCandidate& cc = p.candidates[c];
      o << (c ? ",\n    " : "\n    ");
      o << "{\"nodes\": " << node_list(cc.nodes, graph) << ", \"rule\": " << quote(cc.rule)
        << ", \"cost\": " << cost_text(cc.cost) << ", \"composites\": [";
      for (size_t k = 0; k < cc.composites.size(); ++k) {
        const Composite& comp = cc.composites[k];
        o << (k ? ", " : "") << "{\"name\": " << quote(comp.name) << ", \"pattern\": " << quote(comp.pattern)
          << ", \"nodes\": " << node_list(comp.inside, graph) << "}";
      }
      o << "]}";
    }
    o << (p.candidates.empty() ? "]}" : "\n   ]}");
  }
  o << (plan.partitions.empty() ? "],\n" : "\n ],\n");
  o << " \"boundaries\": [";
  for (size_t i = 0; i < plan.boundaries.size(); ++i) {
    const Boundary& b = plan.boundaries[i];
    o << (i ? ",\n  " : "\n  ") << "{\"value\": " << quote(graph.value(b.value).name) << ", \"from\": " << quote(b.from)
      << ", \"to\": " << quote(b.to) << ", \"bytes\": " << b.bytes << ", \"cost\": " << cost_text(b.cost) << "}";
  }
  o << (plan.boundaries.empty() ? "],\n" : "\n ],\n");
  if (!plan.steering.empty()) {
    o << " \"steering\": [";
    for (size_t i = 0; i < plan.steering.size(); ++i) {
      const PlanSteering& st = plan.steering[i];
      o << (i ? ",\n  " : "\n  ") << "{\"kind\": " << quote(st.rule.kind == SteeringRule::Kind::pin ? "pin" : "forbid")
        << ", \"selector\": " << quote(st.rule.selector) << ", \"backend\": " << quote(st.rule.backend)
        << ", \"nodes\": " << node_list(st.nodes, graph) << "}";
    }
    o << "\n ],\n";
  }
  if (!plan.verified_choice.empty()) {
    o << " \"verified\": {\"chosen\": " << quote(plan.verified_choice) << ", \"latency_ms\": {";
    for (size_t i = 0; i < plan.verified_ms.size(); ++i)
      o << (i ? ", " : "") << quote(plan.verified_ms[i].first) << ": " << format_plan_number(plan.verified_ms[i].second);
    o << "}},\n";
  }
  if (const auto& m = plan.tuned_on)
    o << " \"tuned_on\": {\"threads\": " << m->threads << ", \"cpu\": " << quote(m->cpu)
      << ", \"machine\": " << quote(m->machine) << "},\n";
  const SearchStats& s = plan.stats;
  o << " \"stats\": {\"candidates\": " << s.candidates << ", \"states\": " << s.states
    << ", \"search_ms\": " << ms(s.search_ms) << ", \"states_pushed\": " << s.states_pushed
    << ", \"states_popped\": " << s.states_popped << ", \"costed\": " << s.costed << ", \"wholes\": " << s.wholes
    << ", \"enumerate_ms\": " << ms(s.enumerate_ms) << ", \"estimate_ms\": " << ms(s.estimate_ms)
    << ", \"coalesce_ms\": " << ms(s.coalesce_ms) << "}";
  write_plan_precision(o, plan);
  if (const auto& b = plan.optimality)
    o << ",\n \"optimality\": {\"proven\": false, \"fallback\": " << quote(b->fallback)
      << ", \"lower_bound\": " << cost_text(b->lower_bound) << ", \"gap\": " << cost_text(b->gap)
      << ", \"memory_budget_mb\": " << (b->memory_budget >> 20) << "}";
  o << "}\n";
  return o.str();
}

nlohmann::json plan_to_json(const Plan& plan, const Graph& graph, const PlanJsonOptions& options) {
  return nlohmann::json::parse(plan_to_json_text(plan, graph, options));
}

// Kahn's algorithm over the edges between partitions (a node's producer in another).
std::optional<std::string> partition_cycle(const Plan& plan, const Graph& graph) {
  const size_t k = plan.partitions.size();
  std::vector<int> owner(static_cast<size_t>(graph.num_nodes()), -1);
  for (size_t i = 0; i < k; ++i) plan.partitions[i].nodes.for_each([&](int n) { owner[size_t(n)] = int(i); });
  std::vector<std::set<int>> succ(k);
  std::vector<int> preds(k, 0);
  for (int n = 0; n < graph.num_nodes(); ++n) {
    if (owner[size_t(n)] < 0) continue;
    for (ValueId v : graph.node(n).inputs) {
      if (v == kNoValue || graph.value(v).producer == kNoNode) continue;
      const int from = owner[size_t(graph.value(v).producer)], to = owner[size_t(n)];
      if (from >= 0 && from != to && succ[size_t(from)].insert(to).second) ++preds[size_t(to)];
    }
  }
  std::vector<int> ready;
  for (size_t i = 0; i < k; ++i)
    if (preds[i] == 0) ready.push_back(int(i));
  size_t done = 0;
  while (!ready.empty()) {
    const int g = ready.back();
    ready.pop_back();
    ++done;
    for (int h : succ[size_t(g)])
      if (--preds[size_t(h)] == 0) ready.push_back(h);
  }
  if (done == k) return std::nullopt;
  // Walk forward inside what is left (every vertex there has a predecessor left, so walking
  // backward from any of them must repeat a vertex): the repeated stretch is a cycle.
  std::vector<std::vector<int>> pred_left(k);
  for (size_t g = 0; g < k; ++g)
    for (int h : succ[g])
      if (preds[g] > 0 && preds[size_t(h)] > 0) pred_left[size_t(h)].push_back(int(g));
  int at = 0;
  while (preds[size_t(at)] == 0) ++at;
  std::vector<int> walk, seen_at(k, -1);
  while (seen_at[size_t(at)] < 0) {
    seen_at[size_t(at)] = int(walk.size());
    walk.push_back(at);
    at = pred_left[size_t(at)].front();
  }
  std::vector<int> cycle(walk.rbegin(), walk.rend() - seen_at[size_t(at)]);   // forward, from walk's end
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string text;
  for (int g : cycle) text += "partitions[" + std::to_string(g) + "] -> ";
  return text + "partitions[" + std::to_string(cycle.front()) + "]";
}

namespace {

// What every step of reading a plan needs: the file (for messages), the model and its node names.
// `at_other_shape`: a bucket's plan read at shapes other than its own (plan.h, "Shape ranges").
struct PlanSource {
  const std::string& file;
  const Graph& graph;
  bool at_other_shape = false;
  std::map<std::string, int> by_name;

  PlanSource(const std::string& file, const Graph& graph, bool at_other_shape = false)
      : file(file), graph(graph), at_other_shape(at_other_shape) {
    for (int n = 0; n < graph.num_nodes(); ++n) by_name.emplace(graph.node(n).name, n);
  }
  // The node names under obj["nodes"], obj being at `place`.
  IndexSet nodes(const nlohmann::json& obj, const std::string& place) const {
    return read_nodes(field(obj, "nodes", file, place), file, place + ".nodes", graph, by_name, at_other_shape);
  }
};

// "format": "tessera.plan", "version": 1.
void check_plan_format(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw UserError(file, "", "expected a JSON object");
  if (read_string(j, "format", file, "") != "tessera.plan")
    throw UserError(file, "format", "expected \"tessera.plan\"");
  const auto& version = field(j, "version", file, "");
  if (!version.is_number_integer() || version.get<int>() != 1)
    throw UserError(file, "version", "unsupported version (this tessera reads version 1)");
}

// The plan's own fields: model, search, cost model, the binding to the model, its costs.
void read_plan_header(const nlohmann::json& j, const PlanSource& src, Plan& plan) {
  const std::string& file = src.file;
  plan.model = read_string(j, "model", file, "");
  plan.search = read_string(j, "search", file, "");
  plan.cost_model = read_string(j, "cost_model", file, "");
  read_binding(j, file, plan);
  if (!src.at_other_shape) check_plan_binding(plan, src.graph, file);
  plan.total_cost = read_cost(field(j, "total_cost", file, ""), file, "total_cost");
  plan.transfer_cost = read_cost(field(j, "transfer_cost", file, ""), file, "transfer_cost");
  if (j.contains("boundary_cost")) plan.boundary_cost = read_cost(j["boundary_cost"], file, "boundary_cost");
  if (j.contains("isolated_total_cost"))
    plan.isolated_total_cost = read_cost(j["isolated_total_cost"], file, "isolated_total_cost");
}

uint64_t read_function_hash(const nlohmann::json& pj, const std::string& file, const std::string& place) {
  std::string h = read_string(pj, "function_hash", file, place);
  try {
    size_t used = 0;
    uint64_t hash = std::stoull(h, &used, 16);
    if (used != h.size()) throw std::invalid_argument(h);
    return hash;
  } catch (const std::exception&) {
    throw UserError(file, place + ".function_hash", "expected 16 hex digits");
  }
}

std::vector<Composite> read_composites(const nlohmann::json& comps, const PlanSource& src, const std::string& cplace) {
  if (!comps.is_array()) throw UserError(src.file, cplace + ".composites", "expected a list");
  std::vector<Composite> out;
  for (size_t k = 0; k < comps.size(); ++k) {
    std::string kplace = cplace + ".composites[" + std::to_string(k) + "]";
    Composite comp;
    comp.name = read_string(comps[k], "name", src.file, kplace);
    comp.pattern = comps[k].contains("pattern") ? read_string(comps[k], "pattern", src.file, kplace) : "";
    comp.inside = src.nodes(comps[k], kplace);
    out.push_back(std::move(comp));
  }
  return out;
}

// One of a partition's chosen candidates; its nodes must lie inside the partition's.
ChosenCandidate read_chosen_candidate(const nlohmann::json& cj, const PlanSource& src, const std::string& cplace,
                                      const IndexSet& partition_nodes) {
  ChosenCandidate cc;
  cc.nodes = src.nodes(cj, cplace);
  cc.rule = cj.contains("rule") ? read_string(cj, "rule", src.file, cplace) : "";
  cc.cost = read_cost(field(cj, "cost", src.file, cplace), src.file, cplace + ".cost");
  if (cj.contains("composites")) cc.composites = read_composites(cj["composites"], src, cplace);
  if (!cc.nodes.is_subset_of(partition_nodes))
    throw UserError(src.file, cplace + ".nodes", "a candidate's nodes must lie inside its partition");
  return cc;
}

// partitions[i]; `seen` holds the nodes of the partitions before it (no node is in two).
Partition read_partition(const nlohmann::json& pj, const PlanSource& src, const std::string& place, IndexSet& seen) {
  const std::string& file = src.file;
  Partition p;
  p.backend = read_string(pj, "backend", file, place);
  p.device = pj.contains("device") ? read_string(pj, "device", file, place) : "cpu";
  p.nodes = src.nodes(pj, place);
  if (p.nodes.empty() && src.at_other_shape) return p;   // every node folded away at this shape
  if (p.nodes.empty()) throw UserError(file, place + ".nodes", "a partition needs at least one node");
  if (p.nodes.intersects(seen))
    throw UserError(file, place + ".nodes",
                    "node '" + src.graph.node((p.nodes & seen).first()).name + "' is already in another partition");
  seen |= p.nodes;
  p.cost = read_cost(field(pj, "cost", file, place), file, place + ".cost");
  if (pj.contains("isolated_cost")) p.isolated_cost = read_cost(pj["isolated_cost"], file, place + ".isolated_cost");
  p.function = read_string(pj, "function", file, place);
  if (pj.contains("function_hash")) p.function_hash = read_function_hash(pj, file, place);
  if (pj.contains("candidates")) {
    const auto& cs = pj["candidates"];
    if (!cs.is_array()) throw UserError(file, place + ".candidates", "expected a list");
    for (size_t c = 0; c < cs.size(); ++c)
      p.candidates.push_back(
          read_chosen_candidate(cs[c], src, place + ".candidates[" + std::to_string(c) + "]", p.nodes));
  }
  return p;
}

// The partitions, disjoint, in an order that runs them (no cycle between them).
void read_partitions(const nlohmann::json& j, const PlanSource& src, Plan& plan) {
  const auto& parts = field(j, "partitions", src.file, "");
  if (!parts.is_array()) throw UserError(src.file, "partitions", "expected a list");
  IndexSet seen(src.graph.num_nodes());
  for (size_t i = 0; i < parts.size(); ++i) {
    Partition p = read_partition(parts[i], src, "partitions[" + std::to_string(i) + "]", seen);
    if (!p.nodes.empty()) plan.partitions.push_back(std::move(p));
  }
  // At its own shapes a plan may leave nodes out (the executor says which); at another shape a
  // node the bucket's plan does not place is one the import made only at this shape.
  if (src.at_other_shape && seen.count() < src.graph.num_nodes())
    throw UserError::mentioning(src.file, "buckets",
                                "the plan of the bucket chosen for " + input_shapes_text(model_input_shapes(src.graph)) +
                                    " does not place node '" + src.graph.node(seen.first_unset()).name +
                                    "', which the model has at these shapes; add them as a bucket (" + mention("shapes") + ")");
  if (auto cycle = partition_cycle(plan, src.graph))
    throw UserError(src.file, "partitions", "the partitions form a cycle (" + *cycle +
                                                "): no order runs them; every partition must only read what earlier ones made");
}

void read_boundaries(const nlohmann::json& bs, const PlanSource& src, Plan& plan) {
  const std::string& file = src.file;
  if (!bs.is_array()) throw UserError(file, "boundaries", "expected a list");
  for (size_t i = 0; i < bs.size(); ++i) {
    std::string place = "boundaries[" + std::to_string(i) + "]";
    Boundary b;
    std::string value = read_string(bs[i], "value", file, place);
    b.value = src.graph.find_value(value);
    if (b.value == kNoValue && src.at_other_shape) continue;
    if (b.value == kNoValue) throw UserError(file, place + ".value", "no value named '" + value + "' in the model");
    b.from = read_string(bs[i], "from", file, place);
    b.to = read_string(bs[i], "to", file, place);
    const auto& bytes = field(bs[i], "bytes", file, place);
    if (!bytes.is_number_integer() || bytes.get<int64_t>() < 0)
      throw UserError(file, place + ".bytes", "expected a non-negative integer");
    b.bytes = bytes.get<int64_t>();
    b.cost = read_cost(field(bs[i], "cost", file, place), file, place + ".cost");
    plan.boundaries.push_back(std::move(b));
  }
}

void read_verified(const nlohmann::json& v, const std::string& file, Plan& plan) {
  if (!v.is_object()) throw UserError(file, "verified", "expected an object");
  plan.verified_choice = read_string(v, "chosen", file, "verified");
  const auto& lat = field(v, "latency_ms", file, "verified");
  if (!lat.is_object()) throw UserError(file, "verified.latency_ms", "expected an object");
  for (const auto& [label, ms] : lat.items()) {
    if (!ms.is_number() || ms.get<double>() < 0)
      throw UserError(file, "verified.latency_ms." + label, "expected a non-negative number");
    plan.verified_ms.emplace_back(label, ms.get<double>());
  }
}

void read_steering(const nlohmann::json& ss, const PlanSource& src, Plan& plan) {
  const std::string& file = src.file;
  if (!ss.is_array()) throw UserError(file, "steering", "expected a list");
  for (size_t i = 0; i < ss.size(); ++i) {
    const std::string place = "steering[" + std::to_string(i) + "]";
    PlanSteering st;
    const std::string kind = read_string(ss[i], "kind", file, place);
    if (kind != "pin" && kind != "forbid") throw UserError(file, place + ".kind", "expected \"pin\" or \"forbid\"");
    st.rule.kind = kind == "pin" ? SteeringRule::Kind::pin : SteeringRule::Kind::forbid;
    st.rule.selector = read_string(ss[i], "selector", file, place);
    st.rule.backend = read_string(ss[i], "backend", file, place);
    st.nodes = src.nodes(ss[i], place);
    plan.steering.push_back(std::move(st));
  }
}

PlanMachine read_tuned_on(const nlohmann::json& m, const std::string& file) {
  const auto& threads = field(m, "threads", file, "tuned_on");
  if (!threads.is_number_integer() || threads.get<int64_t>() < 1 || threads.get<int64_t>() > 1 << 20)
    throw UserError(file, "tuned_on.threads", "expected a positive integer");
  return PlanMachine{int(threads.get<int64_t>()), read_string(m, "cpu", file, "tuned_on"),
                     read_string(m, "machine", file, "tuned_on")};
}

// "stats" is informative: a field of the wrong type is skipped, not an error.
void read_stats(const nlohmann::json& s, SearchStats& stats) {
  auto num = [&](const char* k, auto& out) {
    using T = std::decay_t<decltype(out)>;
    // Integer counts only from integers: get<int64_t> of 1e300 would be undefined behaviour.
    if (s.contains(k) && (std::is_integral_v<T> ? s[k].is_number_integer() : s[k].is_number())) out = s[k].get<T>();
  };
  num("candidates", stats.candidates);
  num("states", stats.states);
  num("states_pushed", stats.states_pushed);
  num("states_popped", stats.states_popped);
  num("costed", stats.costed);
  num("wholes", stats.wholes);
  num("search_ms", stats.search_ms);
  num("enumerate_ms", stats.enumerate_ms);
  num("estimate_ms", stats.estimate_ms);
  num("coalesce_ms", stats.coalesce_ms);
}

PlanOptimality read_optimality(const nlohmann::json& b, const std::string& file) {
  auto number = [&](const char* k) {
    const auto& v = field(b, k, file, "optimality");
    if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e300)
      throw UserError(file, std::string("optimality.") + k, "expected a non-negative number");
    return v.get<double>();
  };
  PlanOptimality opt;
  opt.fallback = read_string(b, "fallback", file, "optimality");
  opt.lower_bound = Cost::value(number("lower_bound"));
  opt.gap = Cost::value(number("gap"));
  opt.memory_budget = size_t(std::min(number("memory_budget_mb"), 1e12)) << 20;
  return opt;
}

// The optional sections after the partitions: boundaries, verification, steering, machine, statistics.
void read_plan_sections(const nlohmann::json& j, const PlanSource& src, Plan& plan) {
  const std::string& file = src.file;
  if (j.contains("boundaries")) read_boundaries(j["boundaries"], src, plan);
  if (j.contains("verified")) read_verified(j["verified"], file, plan);
  if (j.contains("steering")) read_steering(j["steering"], src, plan);
  if (j.contains("tuned_on")) plan.tuned_on = read_tuned_on(j["tuned_on"], file);
  if (j.contains("stats") && j["stats"].is_object()) read_stats(j["stats"], plan.stats);
  if (j.contains("accuracy")) plan.accuracy = read_plan_accuracy(j["accuracy"], file);
  if (j.contains("quantization")) plan.quantization = read_plan_quantization(j["quantization"], file, src.graph);
  if (j.contains("optimality")) plan.optimality = read_optimality(j["optimality"], file);
}

}  // namespace

namespace {

Plan read_one_plan(const nlohmann::json& j, const std::string& file, const Graph& graph, bool at_other_shape) {
  check_plan_format(j, file);
  const PlanSource src(file, graph, at_other_shape);
  Plan plan;
  read_plan_header(j, src, plan);
  read_partitions(j, src, plan);
  read_plan_sections(j, src, plan);
  return plan;
}

// A plan file made over shape ranges: the bucket for the graph's shapes, read at them.
Plan read_bucket_plan(std::shared_ptr<const PlanSet> set, const std::string& file, const Graph& graph) {
  const InputShapes shapes = model_input_shapes(graph);
  const size_t b = set->choose(shapes);
  const nlohmann::json& pj = set->plan_json(b);
  Plan own;   // the shapes the bucket's plan was tuned at
  read_binding(pj, file, own);
  const bool exact = own.input_shapes == shapes;
  if (!exact) {
    // Checked without the fingerprint: the plan's inputs, the ranged ones at the graph's shapes
    // (choose() kept those inside their ranges), the others at the plan's own, must bind
    // exactly, so another model's inputs and other shapes of an input not ranged are refused.
    Plan same_inputs;
    for (const auto& input : own.input_shapes) {
      const std::string& name = input.first;
      const bool ranged = std::any_of(set->ranges.begin(), set->ranges.end(), [&](const ShapeRange& r) { return r.input == name; });
      auto it = std::find_if(shapes.begin(), shapes.end(), [&](const auto& s) { return s.first == name; });
      same_inputs.input_shapes.emplace_back(name, ranged && it != shapes.end() ? it->second : input.second);
    }
    check_plan_binding(same_inputs, graph, file);
  }
  Plan plan = read_one_plan(pj, file, graph, !exact);
  plan.shape_set = std::move(set);
  plan.bucket = b;
  plan.bucket_exact = exact;
  return plan;
}

}  // namespace

Plan plan_at_other_shapes(const nlohmann::json& j, const std::string& file, const Graph& graph) {
  return read_one_plan(j, file, graph, true);
}

Plan plan_from_json(const nlohmann::json& j, const std::string& file, const Graph& graph) {
  if (j.is_object() && j.contains("buckets")) {
    check_plan_format(j, file);
    return read_bucket_plan(read_plan_set(j, file), file, graph);
  }
  return read_one_plan(j, file, graph, false);
}

Plan read_plan_file(const std::string& path, const Graph& graph) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path, "", "cannot read plan file");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(path, "byte " + std::to_string(e.byte), "not valid JSON");
  } catch (const nlohmann::json::exception& e) {
    // A number out of range ("1e400": out_of_range.406) is the other way parsing fails.
    throw UserError(path, "", "not valid JSON: " + json_error_text(e.what()));
  }
  return plan_from_json(j, path, graph);
}

std::vector<std::pair<std::string, Shape>> read_plan_input_shapes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    const nlohmann::json j = nlohmann::json::parse(ss.str());
    Plan plan;
    if (j.is_object()) read_binding(j, path, plan);
    return plan.input_shapes;
  } catch (const std::exception&) {
    return {};
  }
}

void write_plan_file(const std::string& path, const Plan& plan, const Graph& graph, const PlanJsonOptions& options) {
  write_plan_text_file(path, plan_to_json_text(plan, graph, options));
}

void write_plan_text_file(const std::string& path, const std::string& text) {
  std::filesystem::path out(path);
  std::filesystem::path tmp = out;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw UserError(path, "", "cannot write plan file");
    f << text;
    f.close();
    if (!f) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw UserError(path, "", "cannot write plan file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw UserError(path, "", "cannot write plan file: " + ec.message());
  }
}

}  // namespace tessera
