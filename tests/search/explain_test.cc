// --explain (src/search/explain.h): the steering a plan obeyed, and whether the end-to-end race kept
// the search's plan or overrode it.
#include <catch2/catch.hpp>

#include "search/explain.h"
#include "search/search_fixture.h"
#include "tessera/model_loader.h"

using namespace tessera;
using namespace tessera::testing;

TEST_CASE("--explain says when the end-to-end race overrode the search, and what steered it", "[search][explain]") {
  const Graph g = load_model("data/models/collage_chain.json");
  const std::vector<BackendSpec> backends{builtin_backend_spec("tvm"), builtin_backend_spec("byoc")};
  const MockCostModel model = mock_costs({{"tvm", 2.0}, {"byoc", 1.0}});
  PartitionOptions options;
  options.model_path = "chain";
  options.steering = Steering::resolve(g, backends, {parse_steering_rule(SteeringRule::Kind::forbid, "out=byoc")}, "chain");
  PartitionOutcome out = partition_graph(g, backends, model, options);
  std::string text = explain_plan(out, g);
  CHECK_THAT(text, Catch::Contains("steering: forbid out=byoc  (1 node"));
  CHECK(text.find("race:") == std::string::npos);   // no race without measured costs

  out.plan.verified_choice = "collage";
  out.plan.verified_ms = {{"collage", 1.5}, {"single:byoc", 2.0}};
  CHECK_THAT(explain_plan(out, g), Catch::Contains("race: the search's plan was fastest end to end; latencies: collage 1.500 ms (chosen) single:byoc 2.000 ms"));
  out.plan.verified_choice = "single:byoc";
  text = explain_plan(out, g);
  CHECK_THAT(text, Catch::Contains("race: the end-to-end race overrode the search: it ships single:byoc, not the collage search's plan"));
  CHECK_THAT(text, Catch::Contains("single:byoc 2.000 ms (chosen)"));
}
