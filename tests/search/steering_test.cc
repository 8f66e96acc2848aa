// Steering (src/search/steering.h): --pin / --forbid drop candidates before pricing, the search
// stays exact over what is left, mistakes are user errors before anything is priced, and the plan
// records the rules. collage_chain: r0=Relu -> a=Abs -> r1=Relu, out=Add(a, r1); byoc takes Relu
// and Add only (patterns), tvm every op.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "search/exhaustive_search.h"
#include "search/search_fixture.h"
#include "support/files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "tessera/error.h"
#include "tessera/model_loader.h"
#include "search/steering.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

const std::string kChain = "data/models/collage_chain.json";

std::vector<BackendSpec> tvm_byoc() { return {builtin_backend_spec("tvm"), builtin_backend_spec("byoc")}; }

SteeringRule pin(const std::string& text) { return parse_steering_rule(SteeringRule::Kind::pin, text); }
SteeringRule forbid(const std::string& text) { return parse_steering_rule(SteeringRule::Kind::forbid, text); }

PartitionOutcome steered(const Graph& g, const std::vector<SteeringRule>& rules, const std::string& search = "collage") {
  const auto backends = tvm_byoc();
  const MockCostModel model = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  PartitionOptions options;
  options.model_path = kChain;
  options.search = search;
  options.steering = Steering::resolve(g, backends, rules, kChain);
  return partition_graph(g, backends, model, options);
}

std::string error_of(const Graph& g, const std::vector<SteeringRule>& rules) {
  try {
    steered(g, rules);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a pin keeps only the pinned backend's candidates for its nodes", "[search][steering]") {
  const Graph g = load_model(kChain);
  const MockCostModel model = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  REQUIRE(describe(run_search(g, tvm_byoc(), model).plan, g) == "byoc{r0} tvm{a} byoc{r1,out}");
  const PartitionOutcome out = steered(g, {pin("r0=tvm")});
  CHECK(describe(out.plan, g) == "tvm{r0,a} byoc{r1,out}");
  const NodeId r0 = g.find_node("r0");
  for (const Candidate& c : out.problem.candidates)
    CHECK_FALSE((c.backend == "byoc" && c.inside().contains(r0)));   // never proposed, so never priced
  CHECK(out.plan.stats.candidates < run_search(g, tvm_byoc(), model).plan.stats.candidates);
  REQUIRE(out.plan.steering.size() == 1);
  CHECK(out.plan.steering[0].rule == pin("r0=tvm"));
  CHECK(out.plan.steering[0].nodes.to_string() == "{" + std::to_string(r0) + "}");
}

TEST_CASE("selectors: a node name, op:TYPE and a glob over node names", "[search][steering]") {
  const Graph g = load_model(kChain);
  CHECK(describe(steered(g, {forbid("op:Relu=byoc")}).plan, g) == "tvm{r0,a,r1} byoc{out}");
  CHECK(describe(steered(g, {pin("r*=tvm")}).plan, g) == "tvm{r0,a,r1} byoc{out}");
  const Steering s = Steering::resolve(g, tvm_byoc(), {pin("r?=tvm"), forbid("o[u]t=byoc")}, kChain);
  CHECK(s.matched(0) == std::vector<NodeId>{g.find_node("r0"), g.find_node("r1")});
  CHECK(s.matched(1) == std::vector<NodeId>{g.find_node("out")});
  CHECK(s.refusal(g.find_node("r0"), "byoc") == std::optional<std::string>("pinned to tvm by pin r?=tvm"));
  CHECK(s.refusal(g.find_node("out"), "byoc") == std::optional<std::string>("forbidden by forbid o[u]t=byoc"));
  CHECK_FALSE(s.refusal(g.find_node("out"), "tvm"));
}

TEST_CASE("the steered search is still exact: collage equals exhaustive over the steered candidates",
          "[search][steering]") {
  const Graph g = load_model(kChain);
  for (const auto& rules : std::vector<std::vector<SteeringRule>>{
           {pin("r0=tvm")}, {forbid("op:Relu=byoc")}, {pin("out=tvm"), forbid("r1=tvm")}}) {
    const PartitionOutcome collage = steered(g, rules);
    const PartitionOutcome exhaustive = steered(g, rules, "exhaustive");
    INFO(describe(collage.plan, g));
    CHECK(collage.plan.total_cost.number() == Approx(exhaustive.plan.total_cost.number()));
  }
}

TEST_CASE("steering mistakes are user errors naming the rule, before anything is priced", "[search][steering]") {
  const Graph g = load_model(kChain);
  CHECK_THAT(error_of(g, {pin("nosuch=tvm")}), Catch::Contains("pin nosuch=tvm: the selector matches no node"));
  CHECK_THAT(error_of(g, {pin("/layer9/*=tvm")}), Catch::Contains("matches no node"));
  CHECK_THAT(error_of(g, {pin("op:Conv=tvm")}), Catch::Contains("matches no node"));
  CHECK_THAT(error_of(g, {forbid("r0=onednnn")}), Catch::Contains("backend 'onednnn' is not among the backends (tvm, byoc)"));
  CHECK_THAT(error_of(g, {pin("a=byoc")}),
             Catch::Contains("cannot pin node 'a' to byoc: op Abs is not in byoc's spec"));
  CHECK_THAT(error_of(g, {pin("r0=tvm"), pin("r*=byoc")}), Catch::Contains("also pinned to tvm"));
  CHECK_THAT(error_of(g, {pin("r0=tvm"), forbid("op:Relu=tvm")}), Catch::Contains("pinned to tvm and forbidden on it"));
  CHECK_THAT(error_of(g, {forbid("a=tvm")}), Catch::Contains("node 'a': pin/forbid leave no backend"));
  CHECK_THROWS_AS(parse_steering_rule(SteeringRule::Kind::pin, "r0"), UserError);
  CHECK_THROWS_AS(parse_steering_rule(SteeringRule::Kind::pin, "=tvm"), UserError);
  CHECK_THROWS_AS(parse_steering_rule(SteeringRule::Kind::forbid, "op:=tvm"), UserError);
}

TEST_CASE("a steered plan records its rules and reads back byte for byte", "[search][steering]") {
  const Graph g = load_model(kChain);
  const PartitionOutcome out = steered(g, {pin("r*=tvm"), forbid("out=tvm")});
  const std::string text = plan_to_json_text(out.plan, g);
  CHECK_THAT(text, Catch::Contains("{\"kind\": \"pin\", \"selector\": \"r*\", \"backend\": \"tvm\", \"nodes\": [\"r0\", \"r1\"]}"));
  CHECK_THAT(text, Catch::Contains("{\"kind\": \"forbid\", \"selector\": \"out\", \"backend\": \"tvm\", \"nodes\": [\"out\"]}"));
  const Plan back = plan_from_json(nlohmann::json::parse(text), "plan.json", g);
  CHECK(plan_to_json_text(back, g) == text);
  // An unsteered plan has no "steering" field: plans without steering are as they were.
  CHECK(plan_to_json_text(steered(g, {}).plan, g).find("steering") == std::string::npos);
  nlohmann::json bad = nlohmann::json::parse(text);
  bad["steering"][0]["kind"] = "prefer";
  CHECK_THROWS_WITH(plan_from_json(bad, "plan.json", g), Catch::Contains("steering[0].kind"));
}

TEST_CASE("partition --pin/--forbid as a process: the plan obeys, mistakes exit 2 with one line", "[search][cli]") {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  const std::string base = tessera_binary() + " partition " + kChain +
                           " --backends tvm,byoc --cost mock:tests/search/inputs/tvm_byoc_costs.json";
  Process ok = run_command(base + " --pin 'r*=tvm' --plan " + plan);
  INFO(ok.err);
  REQUIRE(ok.exit_code == 0);
  CHECK_THAT(read_file(plan), Catch::Contains("\"nodes\": [\"r0\", \"r1\"]}"));
  Process explained = run_command(base + " --forbid op:Relu=byoc --explain");
  CHECK(explained.exit_code == 0);
  CHECK_THAT(explained.out, Catch::Contains("steering: forbid op:Relu=byoc  (2 nodes"));
  for (const char* args : {"--pin nosuch=tvm", "--pin r0=onednnn", "--pin a=byoc", "--forbid r0", "--why nosuch"}) {
    std::filesystem::remove(plan);
    Process r = run_command(base + " " + args + " --plan " + plan);
    INFO(args << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(plan));
  }
}
