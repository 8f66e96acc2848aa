// The tessera.mock_costs file: Collage's numbers, per-op weights, decay, overhead, file errors.
#include <catch2/catch.hpp>

#include "cost_models/graph_builder.h"
#include "tessera/error.h"
#include "cost_models/mock_cost_model.h"

using namespace tessera;
using tessera::test::chain;

namespace {
const char* kCollage = R"({"format": "tessera.mock_costs", "version": 1,
  "backends": {"tvm": {"per_op": 5.0}, "byoc": {"per_op": 6.0}}})";

std::string error_of(const std::string& text) {
  try {
    parse_mock_costs(text, "costs.json");
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("mock costs reproduce Collage's mock estimator") {
  MockCosts m = parse_mock_costs(kCollage, "costs.json");
  Graph five = chain({"Relu", "Relu", "Relu", "Add", "Relu"});
  // 6 x (1 + 0.9 + 0.81 + 0.729 + 0.6561) = 6 x 4.0951
  REQUIRE(mock_cost(m.backends["byoc"], five) == Approx(6 * 4.0951).epsilon(1e-12));
  REQUIRE(mock_cost(m.backends["byoc"], five) == Approx(24.5706));
  REQUIRE(mock_cost(m.backends["tvm"], chain({"Abs"})) == 5.0);
  // The whole collage chain plan: byoc{5 nodes} + tvm{Abs} + tvm{Abs} = 34.5706
  REQUIRE(mock_cost(m.backends["byoc"], five) + 2 * mock_cost(m.backends["tvm"], chain({"Abs"})) ==
          Approx(34.5706));

  MockCostModel model(m);
  Graph one = chain({"Relu"});
  REQUIRE(model.estimate(CostRequest(one, structural_hash(one), "byoc", "cpu")) == Cost::value(6.0));
  REQUIRE(model.estimate(CostRequest(one, structural_hash(one), "nope", "cpu")).is_invalid());
  REQUIRE(model.name() == "mock");
}

TEST_CASE("mock costs: per-op weights, decay and overhead follow model order") {
  MockCosts m = parse_mock_costs(R"({"format": "tessera.mock_costs", "version": 1, "backends":
      {"byoc": {"per_op": 1.0, "decay": 0.5, "overhead": 0.5, "op": {"Relu": 0.4}}}})", "c.json");
  const MockBackendCosts& b = m.backends["byoc"];
  // Relu, Abs, Relu: 0.5 + 0.4 + 1.0*0.5 + 0.4*0.25
  REQUIRE(mock_cost(b, chain({"Relu", "Abs", "Relu"})) == Approx(0.5 + 0.4 + 0.5 + 0.1));
  // Abs, Relu, Relu: order matters
  REQUIRE(mock_cost(b, chain({"Abs", "Relu", "Relu"})) == Approx(0.5 + 1.0 + 0.2 + 0.1));
  REQUIRE(mock_cost(b, Graph{}) == 0.5);
}

TEST_CASE("mock costs: same-device transfer is free, the optional transfer prices crossings") {
  MockCostModel plain(parse_mock_costs(kCollage, "c.json"));
  REQUIRE(plain.transfer(400, "cpu", "cpu") == Cost::zero());
  REQUIRE(plain.transfer(400, "cpu", "gpu") == Cost::zero());
  MockCostModel priced(parse_mock_costs(R"({"format": "tessera.mock_costs", "version": 1,
      "backends": {"a": {"per_op": 1}}, "transfer": {"per_byte": 0.01, "latency": 1}})", "c.json"));
  REQUIRE(priced.transfer(400, "cpu", "gpu").number() == Approx(5.0));
  REQUIRE(priced.transfer(400, "gpu", "gpu") == Cost::zero());
  REQUIRE(plain.fingerprint() != priced.fingerprint());
  // Reformatting the file keeps the fingerprint.
  MockCostModel again(parse_mock_costs(R"({"version":1,"format":"tessera.mock_costs","backends":{
      "byoc":{"per_op":6.0},"tvm":{"per_op":5,"decay":0.9}}})", "other.json"));
  REQUIRE(again.fingerprint() == plain.fingerprint());
}

TEST_CASE("mock costs: every backend in the list must be priced") {
  MockCosts m = parse_mock_costs(kCollage, "costs.json");
  check_mock_backends(m, {"tvm", "byoc"});
  try {
    check_mock_backends(m, {"tvm", "x", "y"});
    FAIL("no error");
  } catch (const UserError& e) {
    REQUIRE(std::string(e.what()) == "costs.json: backends: no costs for backend 'x'");
  }
  MockCostModel model(m);
  REQUIRE_THROWS_AS(model.check_backends({{"tvm", "cpu"}, {"onednn", "cpu"}}), UserError);
}

TEST_CASE("mock cost file errors name the file and the JSON path") {
  auto with = [](const std::string& backends) {
    return R"({"format": "tessera.mock_costs", "version": 1, "backends": )" + backends + "}";
  };
  REQUIRE(error_of(with(R"({"b": {"per_op": "2"}})")) == "costs.json: /backends/b/per_op: expected a number, got string");
  REQUIRE(error_of(with(R"({"b": {"per_op": 2, "speed": 1}})")) == "costs.json: /backends/b/speed: unknown field");
  REQUIRE(error_of(with(R"({"b": {"decay": 0.5}})")) == "costs.json: /backends/b/per_op: missing field");
  REQUIRE(error_of(with(R"({"b": {"per_op": 1, "decay": 1.5}})")) == "costs.json: /backends/b/decay: must be in (0, 1], got 1.5");
  REQUIRE(error_of(with(R"({"b": {"per_op": -1}})")) == "costs.json: /backends/b/per_op: must be in [0, inf), got -1");
  REQUIRE(error_of(with(R"({"b": {"per_op": 1, "op": {"Relu": true}}})")) == "costs.json: /backends/b/op/Relu: expected a number, got boolean");
  REQUIRE(error_of(with(R"([1])")) == "costs.json: /backends: expected an object, got array");
  REQUIRE(error_of(R"({"format": "tessera.backend", "version": 1, "backends": {}})") ==
          "costs.json: /format: expected \"tessera.mock_costs\", got \"tessera.backend\"");
  REQUIRE(error_of(R"({"format": "tessera.mock_costs", "version": 2, "backends": {}})") == "costs.json: /version: expected 1");
  REQUIRE(error_of(R"({"format": "tessera.mock_costs", "version": 1, "backends": {}, "extra": 0})") ==
          "costs.json: /extra: unknown field");
  REQUIRE(error_of("{\"format\": \n  \"tessera.mock_costs\",, }") == "costs.json: 2:24: invalid JSON");
  REQUIRE_THROWS_WITH(load_mock_costs("/nonexistent/costs.json"), "/nonexistent/costs.json: cannot read mock cost file");
}
