// `tessera partition` as a process: a plan on success, exit 2 with one line and no output file on
// bad input (unknown backend, backend missing from the cost file, a node no backend can take).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace {

struct Run {
  int status;
  std::string err;
};

Run tessera(const std::string& args) {
  const std::string err_file = "build-search-cli-test.err";
  std::string cmd = std::string(TESSERA_BINARY_DIR) + "/tessera " + args + " >/dev/null 2>" + err_file;
  int rc = std::system(cmd.c_str());
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(err_file.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, ss.str()};
}

const std::string kModel = "data/models/collage_chain.json";   // r0=Relu a=Abs r1=Relu out=Add
const std::string kCosts = "mock:tests/search/inputs/tvm_byoc_costs.json";
const std::string kPlan = "build-search-cli-test.plan.json";

}  // namespace

TEST_CASE("tessera partition writes a plan", "[search][cli]") {
  REQUIRE(std::filesystem::exists(std::string(TESSERA_BINARY_DIR) + "/tessera"));
  std::remove(kPlan.c_str());
  Run r = tessera("partition " + kModel + " --backends tvm,byoc --cost " + kCosts + " --plan " + kPlan);
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::ifstream in(kPlan);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str().find("\"total_cost\": 4.9,") != std::string::npos);   // byoc{r0} tvm{a} byoc{r1,out}
  std::remove(kPlan.c_str());
}

TEST_CASE("tessera partition rejects bad input with exit 2, one line, no plan", "[search][cli]") {
  REQUIRE(std::filesystem::exists(std::string(TESSERA_BINARY_DIR) + "/tessera"));
  std::remove(kPlan.c_str());
  struct Case {
    std::string args, needle;
  } cases[] = {
      {"--backends tvm,nosuch --cost " + kCosts, "nosuch"},
      {"--backends tvm,ref --cost " + kCosts, "ref"},
      {"--backends byoc --cost " + kCosts, "node 'a'"},
      {"--backends tvm --search nonsense --cost " + kCosts, "--search"},
  };
  for (const Case& c : cases) {
    Run r = tessera("partition " + kModel + " " + c.args + " --plan " + kPlan);
    INFO(c.args << " -> " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(c.needle) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(kPlan));
  }
}
