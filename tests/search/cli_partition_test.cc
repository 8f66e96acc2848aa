// `tessera partition` as a process: a plan on success, exit 2 with one line and no output file on
// bad input (unknown backend, backend missing from the cost file, a node no backend can take).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "support/files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace tessera::testing;

namespace {

const std::string kModel = "data/models/collage_chain.json";   // r0=Relu a=Abs r1=Relu out=Add
const std::string kCosts = "mock:tests/search/inputs/tvm_byoc_costs.json";

Process partition(const std::string& args) { return run_command(tessera_binary() + " partition " + kModel + " " + args); }

}  // namespace

TEST_CASE("tessera partition writes a plan", "[search][cli]") {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  Process r = partition("--backends tvm,byoc --cost " + kCosts + " --plan " + plan);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = read_file(plan);
  CHECK(text.find("\"total_cost\": 4.9,") != std::string::npos);   // byoc{r0} tvm{a} byoc{r1,out}
  CHECK(text.find("\"nodes\": [\"a\"]") != std::string::npos);
}

TEST_CASE("tessera partition rejects bad input with exit 2, one line, no plan", "[search][cli]") {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  struct Case {
    std::string args, needle;
  } cases[] = {
      {"--backends tvm,nosuch --cost " + kCosts, "nosuch"},
      {"--backends tvm,ref --cost " + kCosts, "ref"},
      {"--backends byoc --cost " + kCosts, "node 'a'"},
      {"--backends tvm --search nonsense --cost " + kCosts, "--search"},
  };
  for (const Case& c : cases) {
    Process r = partition(c.args + " --plan " + plan);
    INFO(c.args << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.needle) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(plan));
  }
}
