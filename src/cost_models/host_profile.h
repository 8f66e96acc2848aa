// The roofline profile of the machine tessera runs on: found where it was kept, else measured once.
//
// Terms. A host profile is a DeviceProfile for device "cpu" that `tessera calibrate`'s measurement
// (calibrate.h) made on this machine at one thread count; its `machine` field says which:
// "<machine_fingerprint()>/t<threads>" (machine.h: CPU model and a hash of its ISA flags).
//
//   --cost roofline            the host profile for this machine and thread count:
//                                DIR/host-<hash of machine>.json if it exists,
//                                else calibrate now (a few seconds, progress lines) and fit each
//                                real backend's factors by timing it (backend_fit.h), save it there
//   --cost roofline:NAME       exactly the named profile (a path, or data/devices/NAME.json); a cpu
//                              profile made on another machine, or on none known, costs one warning
//
// DIR is `devices/` beside the cost database (the --cache file's folder, else ~/.cache/tessera/),
// so a machine calibrates once and every later plan on it is priced by the same numbers: plans
// stay byte-identical for the same inputs. Profiles of several machines (a shared home folder)
// live side by side, one file each.
//
// Why the thread count is part of the key: `run`, `tune` and `bench` execute with --threads T
// (default 1), and a profile measured on every core predicts a single-threaded run several times
// too fast. Why calibrate rather than ship numbers: data/devices/host.json describes the machine
// it was made on; on another CPU it was off by 6.7x.
//
// Test hook: $TESSERA_ROOFLINE_PROFILE, when set, is the profile plain `--cost roofline` uses (a
// path or a name), with no lookup, no calibration and no warning; ctest sets it to
// data/devices/host.json so tests see fixed numbers and write nothing outside their own folders.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cost_models/calibrate.h"
#include "cost_models/device_profile.h"

namespace tessera {

struct HostProfileOptions {
  std::filesystem::path dir;   // where host profiles are kept; empty: default_host_profile_dir()
  int threads = 1;             // the thread count plans will run with (run/tune/bench --threads)
  // One line per event (calibrating, wrote, a foreign profile); null: "tessera: LINE" on stderr.
  std::function<void(const std::string&)> note;
  CalibrateOptions calibrate;  // the measurement when none is kept; its threads are `threads`
  // After calibrating: fits the per-backend factors by timing the real backends (set by
  // measure_cost_model_options(), which links them; backend_fit.h). Returns lines to show.
  std::function<std::vector<std::string>(DeviceProfile&, int threads)> fit_backends;
};

// "<machine_fingerprint()>/t<threads>".
std::string host_machine(int threads);
// ~/.cache/tessera/devices ($XDG_CACHE_HOME/tessera/devices): beside default_cost_database_path().
std::filesystem::path default_host_profile_dir();
// The folder beside a cost database file: its parent folder's devices/.
std::filesystem::path host_profile_dir_for(const std::filesystem::path& database);
// DIR/host-<16 hex digits of a hash of host_machine(threads)>.json, or ...-unfitted.json for a
// profile made without fit_backends (a program that does not link the backends): such a profile
// keeps the starting factors and must not stand in for a fitted one, nor the other way round.
std::filesystem::path host_profile_path(const std::filesystem::path& dir, int threads, bool fitted = true);

// The kept profile for this machine and thread count, else a fresh calibration, saved (a folder
// that cannot be written costs a note, not the run). A kept file that does not parse is a
// UserError naming it.
DeviceProfile fit_host_profile(const HostProfileOptions& options);

// "" when `p` is not a cpu profile or was calibrated on this machine at `threads`; else one line:
// "profile FILE was calibrated on OTHER, this is MACHINE: its costs may be off; plain --cost
// roofline fits this machine".
std::string foreign_profile_warning(const DeviceProfile& p, int threads);

}  // namespace tessera
