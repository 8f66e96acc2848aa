// The tessera.mock_costs file and the mock cost model. See src/cost_models/mock_cost_model.h.
#include "cost_models/mock_cost_model.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "cost_models/json_fields.h"
#include "tessera/error.h"
#include "ir/structural_hash.h"

namespace tessera {

using nlohmann::json;
using cost_detail::JsonFields;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

MockBackendCosts parse_backend(const JsonFields& f, const json& j, const std::string& path) {
  f.expect_object(j, path, {"per_op", "decay", "overhead", "op"});
  MockBackendCosts c;
  c.per_op = f.in_range(*f.number(j, path, "per_op", true), path + "/per_op", 0, false, kInf, true);
  if (auto d = f.number(j, path, "decay", false)) c.decay = f.in_range(*d, path + "/decay", 0, true, 1, false);
  if (auto o = f.number(j, path, "overhead", false))
    c.overhead = f.in_range(*o, path + "/overhead", 0, false, kInf, true);
  if (auto it = j.find("op"); it != j.end()) {
    f.expect_object(*it, path + "/op");
    for (const auto& [op, w] : it->items()) {
      std::string p = path + "/op/" + op;
      if (!w.is_number()) f.fail(p, std::string("expected a number, got ") + w.type_name());
      c.op[op] = f.in_range(w.get<double>(), p, 0, false, kInf, true);
    }
  }
  return c;
}

MockCrossing parse_crossing(const JsonFields& f, const json& j, const std::string& path) {
  f.expect_object(j, path, {"latency", "per_byte"});
  MockCrossing c;
  if (auto x = f.number(j, path, "latency", false)) c.latency = f.in_range(*x, path + "/latency", 0, false, kInf, true);
  if (auto x = f.number(j, path, "per_byte", false)) c.per_byte = f.in_range(*x, path + "/per_byte", 0, false, kInf, true);
  return c;
}

// Canonical text of what was parsed (defaults filled in): the fingerprint does not move when the
// file is only reformatted.
std::string canonical(const MockCosts& m) {
  json j = json::object();
  for (const auto& [name, c] : m.backends) {
    j["backends"][name] = {{"per_op", c.per_op}, {"decay", c.decay}, {"overhead", c.overhead},
                           {"op", c.op}};
  }
  j["transfer"] = {{"per_byte", m.transfer_per_byte}, {"latency", m.transfer_latency}};
  // Only when given, so that fingerprints of files without boundaries stay what they were.
  if (m.boundary_default.latency != 0 || m.boundary_default.per_byte != 0 || !m.boundary_pairs.empty()) {
    auto crossing = [](const MockCrossing& c) { return json{{"latency", c.latency}, {"per_byte", c.per_byte}}; };
    j["boundaries"]["default"] = crossing(m.boundary_default);
    for (const auto& [pair, c] : m.boundary_pairs) j["boundaries"]["pairs"][pair] = crossing(c);
  }
  return j.dump();
}
}  // namespace

MockCosts parse_mock_costs(std::string_view text, const std::string& file) {
  JsonFields f(file);
  json root = f.parse(text);
  f.expect_object(root, "", {"format", "version", "backends", "transfer", "boundaries"});
  f.expect_header(root, "tessera.mock_costs");
  MockCosts m;
  m.file = file;
  auto it = root.find("backends");
  if (it == root.end()) f.fail("/backends", "missing field");
  f.expect_object(*it, "/backends");
  for (const auto& [name, j] : it->items()) m.backends[name] = parse_backend(f, j, "/backends/" + name);
  if (auto t = root.find("transfer"); t != root.end()) {
    f.expect_object(*t, "/transfer", {"per_byte", "latency"});
    if (auto x = f.number(*t, "/transfer", "per_byte", false))
      m.transfer_per_byte = f.in_range(*x, "/transfer/per_byte", 0, false, kInf, true);
    if (auto x = f.number(*t, "/transfer", "latency", false))
      m.transfer_latency = f.in_range(*x, "/transfer/latency", 0, false, kInf, true);
  }
  if (auto b = root.find("boundaries"); b != root.end()) {
    f.expect_object(*b, "/boundaries", {"default", "pairs"});
    if (auto d = b->find("default"); d != b->end()) m.boundary_default = parse_crossing(f, *d, "/boundaries/default");
    if (auto pairs = b->find("pairs"); pairs != b->end()) {
      f.expect_object(*pairs, "/boundaries/pairs");
      for (const auto& [pair, c] : pairs->items()) {
        std::string p = "/boundaries/pairs/" + pair;
        size_t arrow = pair.find("->");
        if (arrow == std::string::npos || arrow == 0 || arrow + 2 == pair.size() ||
            pair.find("->", arrow + 2) != std::string::npos)
          f.fail(p, "expected a key \"PRODUCER->CONSUMER\", e.g. \"onednn->ref\"");
        m.boundary_pairs[pair] = parse_crossing(f, c, p);
      }
    }
  }
  return m;
}

MockCosts load_mock_costs(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path.string(), "", "cannot read mock cost file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_mock_costs(ss.str(), path.string());
}

void check_mock_backends(const MockCosts& costs, const std::vector<std::string>& backends) {
  for (const std::string& b : backends) {
    if (!costs.backends.count(b)) throw UserError(costs.file, "backends", "no costs for backend '" + b + "'");
  }
}

double mock_cost(const MockBackendCosts& c, const Graph& fn) {
  double total = c.overhead;
  double scale = 1.0;   // decay^k
  for (const Node& n : fn.nodes) {
    auto it = c.op.find(n.op);
    total += (it != c.op.end() ? it->second : c.per_op) * scale;
    scale *= c.decay;
  }
  return total;
}

MockCostModel::MockCostModel(MockCosts costs)
    : costs_(std::move(costs)),
      fingerprint_("mock/1/" + hash_hex(fnv1a64(canonical(costs_)))) {}

Cost MockCostModel::estimate_impl(const CostRequest& r) const {
  auto it = costs_.backends.find(r.backend);
  if (it == costs_.backends.end()) return Cost::invalid("mock: no costs for backend '" + r.backend + "'");
  return Cost::value(mock_cost(it->second, *r.function));
}

Cost MockCostModel::transfer_impl(size_t bytes, std::string_view from, std::string_view to) const {
  if (from == to) return Cost::zero();
  return Cost::value(costs_.transfer_latency + static_cast<double>(bytes) * costs_.transfer_per_byte);
}

Cost MockCostModel::boundary_impl(const TensorType& type, std::string_view from, std::string_view to) const {
  auto it = costs_.boundary_pairs.find(std::string(from) + "->" + std::string(to));
  const MockCrossing& c = it != costs_.boundary_pairs.end() ? it->second : costs_.boundary_default;
  int64_t n = type.numel();
  return Cost::value(c.price(n > 0 ? type.bytes() : 0));
}

void MockCostModel::check_backends_impl(const std::vector<BackendRef>& backends) const {
  std::vector<std::string> names;
  for (const BackendRef& b : backends) names.push_back(b.name);
  check_mock_backends(costs_, names);
}

}  // namespace tessera
