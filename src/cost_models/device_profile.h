// DeviceProfile: the numbers the roofline cost model and transfer costs are computed from.
//
// Terms. A profile describes one piece of hardware (format `tessera.device`, docs/formats.md):
//   name               "xeon_8380", "a100", "host"
//   device             the backend device it stands for: "cpu", "gpu", ...
//   peak_gflops        peak FP32 GFLOP/s
//   bandwidth_gbs      main-memory bandwidth, GB/s (1e9 bytes/s)
//   call_overhead_us   cost of one kernel/function call, microseconds
//   link               {bandwidth_gbs, latency_us} to the host; absent on the host itself
//   efficiency         per backend {compute, memory} in (0, 1]: the share of peak / bandwidth a
//                      backend reaches; "default" applies to backends not listed (required);
//                      optional call_overhead_us per backend overrides the profile's (written by
//                      `tessera refit`, roofline_refit.h; absent in older profiles)
//   source             where the numbers come from (spec sheet URL, `tessera calibrate`)
//   machine            optional: the machine and thread count a calibrated profile was measured
//                      on, "<machine_fingerprint()>/t<threads>" (machine.h); `--cost roofline`
//                      picks the profile of this machine by it (host_profile.h)
//
// Profiles live in data/devices/*.json; `tessera calibrate` writes data/devices/host.json for this
// machine. Efficiency factors are in the profile, not the code, so a measured run can refit them.
//
// The fingerprint is the profile name plus a hash of its canonical JSON: the database key changes
// when any number changes, and stays put when only whitespace or field order does.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

struct Efficiency {
  double compute = 1.0;
  double memory = 1.0;
  std::optional<double> call_overhead_us;   // unset: the profile's call_overhead_us
  // How many times faster than its f32 compute the backend runs int8 work (a convolution or
  // matmul on 8-bit operands summed in int32: roofline_cost_model.h); unset: 1, the f32 rate.
  std::optional<double> int8_speedup;
};

struct LinkProfile {
  double bandwidth_gbs = 0.0;
  double latency_us = 0.0;
};

struct DeviceProfile {
  std::string name;
  std::string device = "cpu";
  std::string source;
  std::string machine;                         // "" = not calibrated on a known machine
  double peak_gflops = 0.0;
  double bandwidth_gbs = 0.0;
  double call_overhead_us = 0.0;
  std::optional<LinkProfile> link;             // to the host; nullopt = this is the host
  std::map<std::string, Efficiency> efficiency;  // contains "default"
  std::string file;                            // where it was loaded from; for messages

  // The factors for `backend`, else "default".
  const Efficiency& efficiency_for(std::string_view backend) const;
  // Seconds per call on `eff`'s backend: eff.call_overhead_us, else the profile's.
  double call_overhead_s(const Efficiency& eff) const {
    return (eff.call_overhead_us ? *eff.call_overhead_us : call_overhead_us) * 1e-6;
  }
  // "name/16-hex-digit hash of the canonical JSON".
  std::string fingerprint() const;
};

// Parse and validate a profile. Errors: UserError("FILE: JSON_PATH: WHAT"), e.g.
// "a100.json: /efficiency/onednn/compute: must be in (0, 1]".
DeviceProfile parse_device_profile(std::string_view json_text, const std::string& file);
DeviceProfile load_device_profile(const std::filesystem::path& path);
// Canonical JSON text (sorted keys, 2-space indent, trailing newline); parse(to_json) == identity.
std::string device_profile_to_json(const DeviceProfile& p);
// Writes atomically (temporary file + rename): a crash never leaves half a profile.
void save_device_profile(const DeviceProfile& p, const std::filesystem::path& path);

// Locates a file under tessera's data/ directory: $TESSERA_DATA_DIR, then data/ next to or above
// the running executable (build/tessera -> ../data), then the source tree this was built from.
// Throws UserError naming `relative` and the places tried when none exists.
std::filesystem::path find_data_file(std::string_view relative);

// A profile named on the command line: an existing path, else data/devices/NAME.json.
DeviceProfile resolve_device_profile(std::string_view name_or_path);

}  // namespace tessera
