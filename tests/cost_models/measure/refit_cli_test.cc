// tessera refit as a process: tune tiny_mlp on ref and eigen into a fresh database (1 ms budget,
// under a second), refit host.json to it, and partition with the written profile. Checks the
// sample count, the report's rows, that the profile loads with per-backend overheads and its
// source, and that --cost roofline:PATH takes it.
#include <catch2/catch.hpp>

#include <string>

#include "support/files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "cost_models/device_profile.h"

using namespace tessera::testing;

namespace {
const std::string kTessera = tessera_binary();

int sh(const std::string& cmd) { return run_command(cmd).exit_code; }
}  // namespace

TEST_CASE("refit: tune, refit, partition with the refitted profile") {
  TempDir dir;
  const std::string db = dir.file("costs.db"), out = dir.file("refit.json");
  REQUIRE(sh(kTessera + " tune data/models/tiny_mlp.json --backends ref,eigen --cache " + db +
             " --budget-ms 1 --repeats 3") == 0);

  const std::string refit = kTessera + " refit --models data/models/tiny_mlp.json --backends ref,eigen --cache " + db;
  Process fitted = run_command(refit + " -o " + out);
  REQUIRE(fitted.exit_code == 0);
  const std::string report = fitted.out, err = fitted.err;
  INFO(report << err);
  CHECK(err.find("14 distinct measured functions (0 invalid, 0 not measured)") != std::string::npos);
  CHECK(report.find("\neigen ") != std::string::npos);
  CHECK(report.find("\nref ") != std::string::npos);

  tessera::DeviceProfile p = tessera::load_device_profile(out);
  CHECK(p.source.find("tessera refit of host.json to 14 measured functions (tiny_mlp") == 0);
  CHECK(p.efficiency.at("ref").call_overhead_us.has_value());
  CHECK(p.efficiency.at("eigen").call_overhead_us.has_value());

  CHECK(sh(kTessera + " partition data/models/tiny_mlp.json --backends ref,eigen --cost roofline:" + out +
           " --plan " + dir.file("plan.json")) == 0);
  CHECK(read_file(dir / "plan.json").find("\"partitions\"") != std::string::npos);

  // Another --threads is another measurement key: nothing to fit, a user error (exit 2).
  CHECK(sh(refit + " --threads 2") == 2);
}
