// The tuning pipeline (include/tessera/tune.h): with costs that are not timings it is the search
// alone, byte for byte; with measured costs it races the plan end to end, records the race, and a
// second call on the same database returns the byte-identical plan without measuring anything.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "search/partitioner.h"
#include "search/steering.h"
#include "search/why_not.h"
#include "support/temp_dir.h"
#include "tessera/backend_spec.h"
#include "tessera/cost_database.h"
#include "tessera/cost_model.h"
#include "tessera/error.h"
#include "cost_models/measure/measured_cost_model.h"
#include "tessera/model_loader.h"
#include "tessera/plan.h"
#include "tessera/tune.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

const std::string kConvBlock = "data/models/conv_block.json";

}  // namespace

TEST_CASE("tune_graph with roofline costs is the search alone, byte for byte") {
  const Graph graph = load_model(kConvBlock);
  const std::vector<BackendSpec> backends = resolve_backends({"ref", "onednn", "eigen"}, {});
  const std::unique_ptr<CostModel> model = make_cost_model("roofline:data/devices/host.json");
  REQUIRE_FALSE(model->measures());
  TuneOptions options;
  options.model_path = kConvBlock;
  const TunedPlan tuned = tune_graph(graph, backends, *model, nullptr, options);
  PartitionOptions po;
  po.model_path = kConvBlock;
  const PartitionOutcome searched = partition_graph(graph, backends, *model, po);
  CHECK(plan_to_json_text(tuned.plan, graph) == plan_to_json_text(searched.plan, graph));
  CHECK(tuned.record.race.empty());
  CHECK_FALSE(tuned.record.priced_in_plan);
  REQUIRE(tuned.search);
}

TEST_CASE("tune_graph with measured costs races the plan, and the database gives it back unmeasured") {
  TempDir dir;
  const Graph graph = load_model(kConvBlock);
  const std::vector<BackendSpec> backends = resolve_backends({"ref", "onednn", "eigen"}, {});
  MeasureOptions mo;
  mo.budget = std::chrono::duration<double>(0.002);
  mo.max_repeats = 5;
  mo.max_parallel = 1;
  TuneOptions options;
  options.model_path = kConvBlock;

  std::string first;
  {
    auto db = CostDatabase::open(dir.file("costs.db"));
    MeasuredCostModel model(mo);
    REQUIRE(model.measures());
    const TunedPlan tuned = tune_graph(graph, backends, model, db.get(), options);
    REQUIRE(tuned.record.race.size() >= 2);   // the search's plan against single:onednn, single:eigen, ...
    size_t chosen = 0;
    for (const RacedContender& c : tuned.record.race) chosen += c.chosen;
    CHECK(chosen == 1);
    CHECK(tuned.plan.verified_choice.size() > 0);
    CHECK(tuned.record.priced_in_plan);
    CHECK_FALSE(describe_record(tuned).empty());
    first = plan_to_json_text(tuned.plan, graph);
  }
  auto db = CostDatabase::open(dir.file("costs.db"));
  const size_t entries = db->stats().entries;
  MeasuredCostModel model(mo);
  options.may_measure = false;   // everything must come from the database
  const TunedPlan again = tune_graph(graph, backends, model, db.get(), options);
  CHECK(plan_to_json_text(again.plan, graph) == first);
  CHECK(model.stats().measured == 0);
  CHECK(db->stats().entries == entries);
  for (const RacedContender& c : again.record.race) CHECK_FALSE(c.measured_now);
}

TEST_CASE("tune_graph refuses bad input with a user error") {
  const Graph graph = load_model(kConvBlock);
  const std::vector<BackendSpec> backends = resolve_backends({"ref", "onednn"}, {});
  const std::unique_ptr<CostModel> model = make_cost_model("roofline:data/devices/host.json");
  TuneOptions options;
  options.search = "sideways";
  CHECK_THROWS_AS(tune_graph(graph, backends, *model, nullptr, options), UserError);
  options.search = "collage";
  options.budget.max_rel_error = -1;
  CHECK_THROWS_AS(tune_graph(graph, backends, *model, nullptr, options), UserError);
}

TEST_CASE("backends_for_search adds a single search's backend; default_cost_spec measures what runs here") {
  CHECK(backends_for_search({"ref"}, "single:onednn") == std::vector<std::string>{"ref", "onednn"});
  CHECK(backends_for_search({"ref", "onednn"}, "single:onednn") == std::vector<std::string>{"ref", "onednn"});
  CHECK(backends_for_search({"ref"}, "collage") == std::vector<std::string>{"ref"});
  CHECK(default_cost_spec(resolve_backends({"ref", "onednn"}, {})) == "measure");
}

TEST_CASE("under --pin the race offers no contender that breaks it, and the plan records where it was tuned") {
  TempDir dir;
  const Graph graph = load_model(kConvBlock);   // conv0 relu0 conv1 add0 relu1
  const std::vector<BackendSpec> backends = resolve_backends({"ref", "onednn", "eigen"}, {});
  MeasureOptions mo;
  mo.budget = std::chrono::duration<double>(0.002);
  mo.max_repeats = 5;
  mo.max_parallel = 1;
  MeasuredCostModel model(mo);
  auto db = CostDatabase::open(dir.file("costs.db"));
  TuneOptions options;
  options.model_path = kConvBlock;
  // Only eigen may take the Relus: single:onednn (onednn, ref for the rest) cannot cover them.
  options.steering = {SteeringRule{SteeringRule::Kind::pin, "op:Relu", "eigen"}};
  const TunedPlan tuned = tune_graph(graph, backends, model, db.get(), options);
  for (const Partition& p : tuned.plan.partitions)
    p.nodes.for_each([&](int n) {
      if (graph.node(n).op == "Relu") CHECK(p.backend == "eigen");
    });
  REQUIRE(tuned.record.race.size() >= 2);   // the search's plan against single:eigen at least
  for (const RacedContender& c : tuned.record.race) CHECK(c.label != "single:onednn");
  bool noted = false;
  for (const std::string& n : tuned.record.notes) noted |= n.find("single:onednn is not a contender under the steering rules (pin, forbid)") == 0;
  CHECK(noted);
  REQUIRE(tuned.plan.steering.size() == 1);
  CHECK(tuned.plan.steering[0].nodes.count() == 2);
  REQUIRE(tuned.plan.tuned_on);
  CHECK(tuned.plan.tuned_on->threads == 1);
  CHECK_FALSE(tuned.plan.tuned_on->machine.empty());
  const std::string text = plan_to_json_text(tuned.plan, graph);
  CHECK(text.find("\"tuned_on\": {\"threads\": 1, ") != std::string::npos);
  CHECK(plan_to_json_text(plan_from_json(nlohmann::json::parse(text), "p.json", graph), graph) == text);

  options.steering = {SteeringRule{SteeringRule::Kind::pin, "relu0", "onednnn"}};
  const size_t measured = model.stats().measured;
  CHECK_THROWS_WITH(tune_graph(graph, backends, model, db.get(), options), Catch::Contains("'onednnn' is not among the backends"));
  CHECK(model.stats().measured == measured);   // refused before anything was measured
}

TEST_CASE("an int8 budget's outcome keeps the graph its search ran on, and --why reads it") {
  // With int8 offered the search runs on a copy of the model carrying calibrated ranges; the
  // outcome's index refers to that copy, so the outcome must own it (explain_why walks it).
  const Graph graph = load_model(kConvBlock);
  const std::vector<BackendSpec> backends = resolve_backends({"ref", "onednn", "onednn_int8"}, {});
  const std::unique_ptr<CostModel> model = make_cost_model("roofline:data/devices/host.json");
  TuneOptions options;
  options.model_path = kConvBlock;
  options.budget.max_rel_error = 0.05;
  const TunedPlan tuned = tune_graph(graph, backends, *model, nullptr, options);
  REQUIRE(tuned.search);
  REQUIRE(tuned.search->searched_graph);
  CHECK(&tuned.search->index->graph() == tuned.search->searched_graph.get());
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes.size()); ++n) {
    const WhyQuery q = parse_why(graph.node(n).name, graph, backends);
    const Steering steering = Steering::resolve(graph, backends, {}, kConvBlock);
    CHECK_THAT(explain_why(*tuned.search, graph, backends, steering, q), Catch::Contains("runs on"));
  }
}
