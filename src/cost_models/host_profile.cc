// This machine's roofline profile: kept beside the cost database, calibrated on first use.
// See src/cost_models/host_profile.h.
#include "cost_models/host_profile.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "tessera/cost_database.h"
#include "tessera/error.h"
#include "cost_models/machine.h"
#include "support/plural.h"
#include "ir/structural_hash.h"

namespace tessera {
namespace {
namespace fs = std::filesystem;

void say(const HostProfileOptions& o, const std::string& line) {
  if (o.note) o.note(line);
  else std::fprintf(stderr, "tessera: %s\n", line.c_str());
}

// "AMD EPYC/isa-3f9c01d2/t1" -> "AMD EPYC, 1 thread": how a person names a machine.
std::string describe(const std::string& machine) {
  const size_t isa = machine.find("/isa-"), t = machine.rfind("/t");
  if (isa == std::string::npos || t == std::string::npos || t < isa) return machine;
  const std::string threads = machine.substr(t + 2);
  return machine.substr(0, isa) + " (" + machine.substr(isa + 1, t - isa - 1) + "), " + threads +
         (threads == "1" ? " thread" : " threads");
}
}  // namespace

std::string host_machine(int threads) { return machine_fingerprint() + "/t" + std::to_string(threads); }

fs::path default_host_profile_dir() { return host_profile_dir_for(default_cost_database_path()); }

fs::path host_profile_dir_for(const fs::path& database) {
  const fs::path parent = database.parent_path();
  return (parent.empty() ? fs::path(".") : parent) / "devices";
}

fs::path host_profile_path(const fs::path& dir, int threads, bool fitted) {
  return dir / ("host-" + hash_hex(fnv1a64(host_machine(threads))) + (fitted ? ".json" : "-unfitted.json"));
}

DeviceProfile fit_host_profile(const HostProfileOptions& o) {
  if (const char* fixed = std::getenv("TESSERA_ROOFLINE_PROFILE"); fixed && *fixed) return resolve_device_profile(fixed);
  const int threads = o.threads > 0 ? o.threads : 1;
  const fs::path dir = o.dir.empty() ? default_host_profile_dir() : o.dir;
  const fs::path path = host_profile_path(dir, threads, static_cast<bool>(o.fit_backends));
  const std::string machine = host_machine(threads);
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    DeviceProfile p = load_device_profile(path);
    if (p.machine == machine) return p;
    // A hash collision or a hand-edited file: measure again rather than trust it.
  }
  say(o, "no roofline profile for this machine (" + describe(machine) + "): calibrating one, a few seconds...");
  CalibrateOptions c = o.calibrate;
  c.threads = threads;
  const auto t0 = std::chrono::steady_clock::now();
  Calibration measured = calibrate_host(c);
  DeviceProfile p = host_profile(measured, c);
  p.machine = machine;
  if (o.fit_backends) {
    for (const std::string& line : o.fit_backends(p, threads)) say(o, "  " + line);
    p.source += "; per-backend factors from conv, gemm and add probes (backend_fit.h)";
  }
  char line[160];
  std::snprintf(line, sizeof line, "calibrated in %.1f s: peak %.1f GFLOP/s, bandwidth %.2f GB/s, call overhead %.3f us",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), p.peak_gflops,
                p.bandwidth_gbs, p.call_overhead_us);
  say(o, line);
  fs::create_directories(dir, ec);
  try {
    save_device_profile(p, path);
    say(o, "wrote " + path.string() + " (used by every later roofline cost model on this machine)");
  } catch (const UserError& e) {
    say(o, std::string("warning: ") + e.what() + "; the profile is used for this run only");
  }
  p.file = path.string();
  return p;
}

std::string foreign_profile_warning(const DeviceProfile& p, int threads) {
  if (p.device != "cpu") return "";
  const std::string here = host_machine(threads > 0 ? threads : 1);
  if (p.machine == here) return "";
  const std::string there = p.machine.empty() ? "another machine" : describe(p.machine);
  return "warning: profile " + (p.file.empty() ? p.name : p.file) + " was calibrated on " + there + ", this is " +
         describe(here) + ": its costs may be off (the roofline cost model without a named profile fits this machine)";
}

}  // namespace tessera
