// This machine's roofline profile (src/cost_models/host_profile.cc): calibrated once per machine and
// thread count, kept in a folder, found again; named profiles from elsewhere warned about once;
// a missing named profile's error lists the profiles that exist.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/temp_dir.h"
#include "cost_models/cost_model_options.h"
#include "tessera/cost_model.h"
#include "cost_models/device_profile.h"
#include "tessera/error.h"
#include "cost_models/host_profile.h"

using namespace tessera;
using tessera::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// test_main.cc pins plain roofline to data/devices/host.json; these tests need the real lookup.
class NoPinnedProfile {
 public:
  NoPinnedProfile() {
    if (const char* v = std::getenv("TESSERA_ROOFLINE_PROFILE")) saved_ = v;
    ::unsetenv("TESSERA_ROOFLINE_PROFILE");
  }
  ~NoPinnedProfile() {
    if (saved_) ::setenv("TESSERA_ROOFLINE_PROFILE", saved_->c_str(), 1);
  }

 private:
  std::optional<std::string> saved_;
};

// A quick calibration (milliseconds, not seconds): the numbers do not matter here.
HostProfileOptions quick(const fs::path& dir, std::vector<std::string>& notes, int threads = 1) {
  HostProfileOptions o;
  o.dir = dir;
  o.threads = threads;
  o.note = [&notes](const std::string& l) { notes.push_back(l); };
  o.calibrate.gemm_n = 64;
  o.calibrate.repeats = 1;
  o.calibrate.copy_bytes = size_t{1} << 20;
  return o;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& s) {
  for (const std::string& l : lines)
    if (l.find(s) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("host profile: calibrated on first use, kept, found again; one per thread count") {
  NoPinnedProfile unpinned;
  TempDir dir;
  std::vector<std::string> notes;
  DeviceProfile first = fit_host_profile(quick(dir.path(), notes));
  CHECK(any_contains(notes, "calibrating"));
  CHECK(fs::is_regular_file(host_profile_path(dir.path(), 1, false)));
  CHECK(first.machine == host_machine(1));
  CHECK(first.device == "cpu");

  notes.clear();
  DeviceProfile again = fit_host_profile(quick(dir.path(), notes));
  CHECK(notes.empty());   // found, not measured again
  CHECK(again.fingerprint() == first.fingerprint());

  DeviceProfile two = fit_host_profile(quick(dir.path(), notes, 2));
  CHECK(any_contains(notes, "calibrating"));
  CHECK(two.machine == host_machine(2));
  CHECK(host_profile_path(dir.path(), 2, false) != host_profile_path(dir.path(), 1, false));
  // A program without the backend fit never hands its profile to one with it, nor back.
  CHECK(host_profile_path(dir.path(), 1, true) != host_profile_path(dir.path(), 1, false));
}

TEST_CASE("host profile: the fit hook adjusts the profile before it is kept") {
  NoPinnedProfile unpinned;
  TempDir dir;
  std::vector<std::string> notes;
  HostProfileOptions o = quick(dir.path(), notes);
  o.fit_backends = [](DeviceProfile& p, int threads) {
    p.efficiency["probe"] = Efficiency{0.25, 0.5, std::nullopt};
    return std::vector<std::string>{"probe: " + std::to_string(threads) + " thread"};
  };
  fit_host_profile(o);
  CHECK(any_contains(notes, "probe: 1 thread"));
  CHECK_FALSE(fs::exists(host_profile_path(dir.path(), 1, false)));
  DeviceProfile kept = load_device_profile(host_profile_path(dir.path(), 1));
  REQUIRE(kept.efficiency.count("probe"));
  CHECK(kept.efficiency.at("probe").compute == 0.25);
}

TEST_CASE("host profile: the test hook pins plain roofline to a named profile without measuring") {
  NoPinnedProfile unpinned;   // restores the fixture's value afterwards
  TempDir dir;
  std::vector<std::string> notes;
  ::setenv("TESSERA_ROOFLINE_PROFILE", "host", 1);
  DeviceProfile p = fit_host_profile(quick(dir.path(), notes));
  CHECK(p.name == "host");
  CHECK(notes.empty());
  CHECK_FALSE(fs::exists(host_profile_path(dir.path(), 1, false)));
}

TEST_CASE("a cpu profile from another machine is used when named, with one warning") {
  DeviceProfile shipped = resolve_device_profile("host");   // calibrated on a Xeon, no machine field
  CHECK(foreign_profile_warning(shipped, 1).find("another machine") != std::string::npos);
  DeviceProfile mine = shipped;
  mine.machine = host_machine(1);
  CHECK(foreign_profile_warning(mine, 1).empty());
  CHECK_FALSE(foreign_profile_warning(mine, 2).empty());   // another thread count: another profile
  CHECK(foreign_profile_warning(resolve_device_profile("a100"), 1).empty());   // not a cpu

  std::vector<std::string> notes;
  CostModelOptions options;
  options.host.note = [&notes](const std::string& l) { notes.push_back(l); };
  auto model = make_cost_model("roofline:host", options);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("warning: profile") != std::string::npos);
  CHECK(notes[0].find('\n') == std::string::npos);
}

TEST_CASE("profiles keep their machine through a save and load; older profiles keep their fingerprint") {
  TempDir dir;
  DeviceProfile p = resolve_device_profile("host");
  const std::string before = p.fingerprint();
  CHECK(p.machine.empty());
  p.machine = host_machine(1);
  CHECK(p.fingerprint() != before);
  save_device_profile(p, dir / "m.json");
  CHECK(load_device_profile(dir / "m.json").machine == host_machine(1));
}

TEST_CASE("a missing named profile: one line naming the profiles that exist, each folder once") {
  try {
    resolve_device_profile("h100");
    FAIL("no error");
  } catch (const UserError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("h100") != std::string::npos);
    CHECK(what.find("a100") != std::string::npos);
    CHECK(what.find("xeon_8380") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
    size_t n = 0;
    for (size_t at = what.find("devices"); at != std::string::npos; at = what.find("devices", at + 1)) ++n;
    CHECK(n == 1);
  }
}
