// --why NODE[=BACKEND] (src/search/why_not.h): per backend the reason it has no candidate, or its best
// candidate and the exact extra cost of the cheapest plan that puts the node there, checked against
// a search run with the node pinned there. collage_chain: r0=Relu -> a=Abs -> r1=Relu,
// out=Add(a, r1); mock costs tvm 2 per op, byoc 1 per op (decay 0.9).
#include <catch2/catch.hpp>

#include "search/why_not.h"
#include "search/search_fixture.h"
#include "support/subprocess.h"
#include "search/cost_display.h"
#include "tessera/error.h"
#include "tessera/model_loader.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

const std::string kWhyModel = "data/models/collage_chain.json";

std::vector<BackendSpec> why_backends() { return {builtin_backend_spec("tvm"), builtin_backend_spec("byoc")}; }

PartitionOutcome why_search(const Graph& g, const std::vector<SteeringRule>& rules = {}) {
  const MockCostModel model = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  PartitionOptions options;
  options.model_path = kWhyModel;
  options.steering = Steering::resolve(g, why_backends(), rules, kWhyModel);
  return partition_graph(g, why_backends(), model, options);
}

std::string why(const Graph& g, const PartitionOutcome& out, const std::string& query, const std::vector<SteeringRule>& rules = {}) {
  return explain_why(out, g, why_backends(), Steering::resolve(g, why_backends(), rules, kWhyModel), parse_why(query, g, why_backends()));
}

}  // namespace

TEST_CASE("--why: the chosen backend, and the other's exact extra cost", "[search][why]") {
  const Graph g = load_model(kWhyModel);
  const PartitionOutcome out = why_search(g);
  REQUIRE(describe(out.plan, g) == "byoc{r0} tvm{a} byoc{r1,out}");
  const std::string text = why(g, out, "r0");
  CHECK_THAT(text, Catch::StartsWith("node 'r0' (Relu) runs on byoc, partition 0\n"));
  CHECK_THAT(text, Catch::Contains("byoc       chosen: the search took"));
  // The extra cost is what the search finds with r0 pinned to tvm, minus the plan's total.
  const PartitionOutcome pinned = why_search(g, {parse_steering_rule(SteeringRule::Kind::pin, "r0=tvm")});
  const double extra = pinned.plan.total_cost.number() - out.plan.total_cost.number();
  REQUIRE(extra > 0);
  char expected[64];
  std::snprintf(expected, sizeof expected, "cheapest plan with it: %s, +%s", display_cost(pinned.plan.total_cost, "mock").c_str(),
                display_cost(Cost::value(extra), "mock").c_str());
  CHECK_THAT(text, Catch::Contains(expected));
}

TEST_CASE("--why: no candidate, with the spec's or the steering's reason", "[search][why]") {
  const Graph g = load_model(kWhyModel);
  const PartitionOutcome out = why_search(g);
  CHECK_THAT(why(g, out, "a=byoc"), Catch::Contains("byoc       no candidate: op Abs is not in byoc's spec"));
  CHECK(why(g, out, "a=byoc").find("tvm ") == std::string::npos);   // only the backend asked about
  const std::vector<SteeringRule> rules{parse_steering_rule(SteeringRule::Kind::forbid, "r0=byoc")};
  CHECK_THAT(why(g, why_search(g, rules), "r0=byoc", rules), Catch::Contains("no candidate: forbidden by forbid r0=byoc"));
  CHECK_THROWS_AS(parse_why("nosuch", g, why_backends()), UserError);
  CHECK_THROWS_WITH(parse_why("r0=onednnn", g, why_backends()), Catch::Contains("'onednnn' is not among the backends"));
}

TEST_CASE("partition --why as a process", "[search][cli]") {
  Process r = run_command(tessera_binary() + " partition " + kWhyModel +
                          " --backends tvm,byoc --cost mock:tests/search/inputs/tvm_byoc_costs.json --why a");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("node 'a' (Abs) runs on tvm"));
  CHECK_THAT(r.out, Catch::Contains("no candidate: op Abs is not in byoc's spec"));
}

TEST_CASE("--why and --pin on an op a backend takes only inside patterns that do not match here", "[search][why]") {
  const Graph g = load_model(kWhyModel);
  const BackendSpec pat = parse_backend_spec(
      R"json({"format": "tessera.backend", "version": 1, "name": "pat",
          "patterns": [{"name": "pat.add_relu", "pattern": "Relu(Add(*, *))"}]})json",
      "pat.json");
  const std::vector<BackendSpec> backends{builtin_backend_spec("tvm"), pat};
  const MockCostModel model = mock_costs({{"tvm", 2.0}, {"pat", 1.0}});
  PartitionOptions options;
  options.model_path = kWhyModel;
  const PartitionOutcome out = partition_graph(g, backends, model, options);
  CHECK_THAT(explain_why(out, g, backends, Steering{}, parse_why("r0=pat", g, backends)),
             Catch::Contains("pat        no candidate: op Relu is only inside pat's patterns (pat.add_relu), none of which matches here"));
  options.steering = Steering::resolve(g, backends, {parse_steering_rule(SteeringRule::Kind::pin, "r0=pat")}, kWhyModel);
  CHECK_THROWS_WITH(partition_graph(g, backends, model, options),
                    Catch::Contains("node 'r0': pinned to pat, which proposes no candidate holding it"));
}
