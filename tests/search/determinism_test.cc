// Plans from -j 1 and -j 2 are byte-identical on every bundled model (roofline costs, the three
// real backends most models use), and every plan is valid.
#include <catch2/catch.hpp>
#include <filesystem>

#include "search/plan_check.h"
#include "search/search_fixture.h"
#include "tessera/model_loader.h"

using namespace tessera;
using namespace tessera::testing;

TEST_CASE("-j 1 and -j 2 give byte-identical plans on every bundled model", "[search][determinism]") {
  std::vector<std::string> models;
  for (const auto& e : std::filesystem::directory_iterator(TESSERA_SOURCE_DIR "/data/models")) {
    std::string ext = e.path().extension().string();
    if (ext == ".onnx" || ext == ".json") models.push_back(e.path().string());
  }
  std::sort(models.begin(), models.end());
  REQUIRE(models.size() >= 5);
  std::vector<BackendSpec> backends = resolve_backends({"ref", "onednn", "eigen"}, {});
  auto roofline = make_cost_model("roofline");
  for (const std::string& path : models) {
    INFO(path);
    Graph g = load_model(path);
    PartitionOutcome one = run_search(g, backends, *roofline, "collage", true, 1);
    PartitionOutcome two = run_search(g, backends, *roofline, "collage", true, 2);
    CHECK(plan_to_json_text(one.plan, g) == plan_to_json_text(two.plan, g));
    auto bad = check_plan(two.plan, *two.index, backends);
    INFO(bad.value_or(""));
    CHECK_FALSE(bad);
  }
}
