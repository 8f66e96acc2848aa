// Parallel estimation: dedupe, cache hits, and identical results for every thread count.
#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <filesystem>
#include <unistd.h>

#include "cost_models/graph_builder.h"
#include "support/files.h"
#include "support/temp_dir.h"
#include "cost_models/estimator.h"
#include "cost_models/mock_cost_model.h"

using namespace tessera;
using tessera::test::chain;

namespace {
// Mock costs plus a call counter: how many estimates really ran.
class CountingModel final : public CostModel {
 public:
  explicit CountingModel(MockCosts m) : mock_(std::move(m)) {}
  std::string name() const override { return "counting"; }
  std::string fingerprint() const override { return "counting/" + mock_.fingerprint(); }
  mutable std::atomic<int> calls{0};

 protected:
  Cost estimate_impl(const CostRequest& r) const override {
    ++calls;
    if (r.backend == "unpriced") return Cost::unknown();
    return mock_.estimate(r);
  }

 private:
  MockCostModel mock_;
};

MockCosts costs() {
  return parse_mock_costs(R"({"format": "tessera.mock_costs", "version": 1, "backends":
      {"tvm": {"per_op": 2.0}, "byoc": {"per_op": 1.0, "decay": 0.7, "op": {"Relu": 0.3}}}})", "c.json");
}

// 40 chains of varying ops and lengths, many structurally equal, on three backends.
struct Workload {
  std::vector<Graph> graphs;
  std::vector<CostRequest> requests;
  Workload() {
    const std::vector<std::string> ops = {"Relu", "Abs", "Tanh", "Relu"};
    for (int i = 0; i < 40; ++i) {
      std::vector<std::string> c;
      for (int k = 0; k <= i % 5; ++k) c.push_back(ops[(i + k) % 4]);
      graphs.push_back(chain(c));
    }
    for (const Graph& g : graphs) {
      for (const char* b : {"tvm", "byoc", "missing"}) requests.emplace_back(g, structural_hash(g), b, "cpu");
    }
  }
};
}  // namespace

TEST_CASE("estimator: identical costs for -j1 and -j2, in input order, each function costed once") {
  Workload w;
  CountingModel model(costs());
  EstimateResult one = estimate_costs(model, w.requests, {1, nullptr});
  int calls_one = model.calls.exchange(0);
  EstimateResult two = estimate_costs(model, w.requests, {2, nullptr});
  REQUIRE(one.costs == two.costs);
  REQUIRE(one.costs.size() == w.requests.size());
  REQUIRE(calls_one == static_cast<int>(one.stats.unique));
  REQUIRE(model.calls == calls_one);
  REQUIRE(one.stats.unique < one.stats.requests);
  REQUIRE(one.stats.estimated == one.stats.unique);
  MockCostModel mock(costs());
  for (size_t i = 0; i < w.requests.size(); ++i) REQUIRE(one.costs[i] == mock.estimate(w.requests[i]));
  REQUIRE(one.costs[2].is_invalid());   // backend "missing"
}

TEST_CASE("estimator: the database answers the second run, and its log is the same for any -j") {
  Workload w;
  CountingModel model(costs());
  tessera::testing::TempDir dir;
  std::string logs[2];
  for (int threads : {1, 2}) {
    auto db = CostDatabase::open(dir / ("j" + std::to_string(threads) + ".db"));
    EstimateResult first = estimate_costs(model, w.requests, {threads, db.get()});
    REQUIRE(first.stats.cache_hits == 0);
    model.calls = 0;
    EstimateResult again = estimate_costs(model, w.requests, {threads, db.get()});
    REQUIRE(model.calls == 0);
    REQUIRE(again.stats.cache_hits == again.stats.unique);
    REQUIRE(again.costs == first.costs);
    logs[threads - 1] = tessera::testing::read_file(db->path());
  }
  REQUIRE_FALSE(logs[0].empty());
  REQUIRE(logs[0] == logs[1]);
}

TEST_CASE("estimator: unknown costs are not cached; a hash collision is not merged") {
  CountingModel model(costs());
  Graph relu = chain({"Relu"}), abs2 = chain({"Abs", "Abs"});
  CostDatabase db;
  std::vector<CostRequest> reqs = {CostRequest(relu, 42, "unpriced", "cpu"), CostRequest(relu, 42, "tvm", "cpu"),
                                   CostRequest(abs2, 42, "tvm", "cpu")};   // same hash, other function
  EstimateResult r = estimate_costs(model, reqs, {2, &db});
  REQUIRE(r.costs[0].is_unknown());
  REQUIRE(r.costs[1] == Cost::value(2.0));
  REQUIRE(r.costs[2] == Cost::value(2.0 + 2.0 * 0.9));
  REQUIRE(r.stats.unique == 3);
  REQUIRE(db.stats().entries == 1);   // only relu on tvm: unknown skipped, the collision not cached
}

TEST_CASE("estimator: a measuring model's spread and samples reach the database") {
  class Measuring final : public CostModel {
   public:
    std::string name() const override { return "measure"; }
    std::string fingerprint() const override { return "measure/test"; }

   protected:
    Cost estimate_impl(const CostRequest& r) const override { return Cost::value(r.function->nodes.size() * 1e-3); }
    CostEntry estimate_entry_impl(const CostRequest& r) const override {
      return CostEntry{estimate_impl(r), 1e-5, 25};
    }
  } model;
  Graph g = chain({"Relu", "Abs"});
  CostDatabase db;
  EstimateResult r = estimate_costs(model, {CostRequest(g, structural_hash(g), "ref", "cpu")}, {1, &db});
  REQUIRE(r.costs[0] == Cost::value(2e-3));
  auto entry = db.lookup(cost_key(model, CostRequest(g, structural_hash(g), "ref", "cpu")));
  REQUIRE(entry.has_value());
  REQUIRE(*entry == CostEntry{Cost::value(2e-3), 1e-5, 25});
}
