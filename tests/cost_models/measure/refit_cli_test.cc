// tessera refit as a process: tune tiny_mlp on ref and eigen into a fresh database (1 ms budget,
// under a second), refit host.json to it, and partition with the written profile. Checks the
// sample count, the report's rows, that the profile loads with per-backend overheads and its
// source, and that --cost roofline:PATH takes it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tessera/device_profile.h"

namespace fs = std::filesystem;

namespace {
const std::string kTessera = std::string(TESSERA_BINARY_DIR) + "/tessera";

int sh(const std::string& cmd) { return WEXITSTATUS(std::system(cmd.c_str())); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("refit: tune, refit, partition with the refitted profile") {
  fs::path dir = fs::temp_directory_path() / ("tessera_refit_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string db = (dir / "costs.db").string(), out = (dir / "refit.json").string();
  REQUIRE(sh(kTessera + " tune data/models/tiny_mlp.json --backends ref,eigen --cache " + db +
             " --budget-ms 1 --repeats 3 >/dev/null 2>&1") == 0);

  const std::string refit = kTessera + " refit --models data/models/tiny_mlp.json --backends ref,eigen --cache " + db;
  REQUIRE(sh(refit + " -o " + out + " >" + (dir / "report.txt").string() + " 2>" + (dir / "err.txt").string()) == 0);
  std::string report = slurp(dir / "report.txt"), err = slurp(dir / "err.txt");
  INFO(report << err);
  CHECK(err.find("14 distinct measured functions (0 invalid, 0 not measured)") != std::string::npos);
  CHECK(report.find("\neigen ") != std::string::npos);
  CHECK(report.find("\nref ") != std::string::npos);

  tessera::DeviceProfile p = tessera::load_device_profile(out);
  CHECK(p.source.find("tessera refit of host.json to 14 measured functions (tiny_mlp") == 0);
  CHECK(p.efficiency.at("ref").call_overhead_us.has_value());
  CHECK(p.efficiency.at("eigen").call_overhead_us.has_value());

  CHECK(sh(kTessera + " partition data/models/tiny_mlp.json --backends ref,eigen --cost roofline:" + out +
           " --plan " + (dir / "plan.json").string() + " >/dev/null 2>&1") == 0);
  CHECK(slurp(dir / "plan.json").find("\"partitions\"") != std::string::npos);

  // Another --threads is another measurement key: nothing to fit, a user error (exit 2).
  CHECK(sh(refit + " --threads 2 >/dev/null 2>&1") == 2);
  fs::remove_all(dir);
}
