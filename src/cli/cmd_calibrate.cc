// tessera calibrate [-o FILE] [--threads T]: measures this machine's roofline numbers (peak GFLOP/s,
// memory bandwidth, call overhead) at T threads (default 1, as run and tune), times each real
// backend on three probes for its efficiency factors (backend_fit.h; --no-backend-fit skips it) and
// writes a tessera.device profile recording the machine; without -o it prints the profile. Plain
// `--cost roofline` runs the same measurement on first use and keeps it (host_profile.h).
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "cost_models/host_profile.h"
#include "cost_models/measure/measured_cost_model.h"
#include "support/plural.h"
#include "cost_models/calibrate.h"
#include "cost_models/device_profile.h"
#include "tessera/error.h"

namespace tessera::cli {

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate", "measure this machine's roofline numbers and write a device profile");
  auto out = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>("host");
  auto opts = std::make_shared<CalibrateOptions>();
  opts->threads = 1;   // as run, tune and bench execute by default
  auto copy_mib = std::make_shared<size_t>(opts->copy_bytes >> 20);
  cmd->add_option("-o,--output", *out, "profile to write (default: print to stdout)");
  cmd->add_option("--name", *name, "profile name")->capture_default_str();
  cmd->add_option("--repeat", opts->repeats, "runs per figure; the best counts")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--repeats", opts->repeats)->group("")->check(CLI::Range(1, 1000));   // the old spelling, hidden
  cmd->add_option("--gemm-size", opts->gemm_n, "sgemm size n (n x n x n)")->capture_default_str()
      ->check(CLI::Range(64, 8192));
  cmd->add_option("--copy-mib", *copy_mib, "size of each copy array, MiB")->capture_default_str()
      ->check(CLI::Range(1, 8192));
  cmd->add_option("--threads", opts->threads, "threads, as run/tune/bench --threads (0 = all cores)")->capture_default_str();
  auto no_fit = std::make_shared<bool>(false);
  cmd->add_flag("--no-backend-fit", *no_fit, "keep the starting efficiency factors instead of timing each real backend");
  cmd->callback([=] {
    CalibrateOptions o = *opts;
    o.copy_bytes = *copy_mib << 20;
    Calibration c = calibrate_host(o);
    DeviceProfile p = host_profile(c, o);
    p.name = *name;
    p.machine = host_machine(c.threads);
    // The same per-backend fit as plain --cost roofline's first use (backend_fit.h).
    if (!*no_fit) {
      for (const std::string& line : measure_cost_model_options().host.fit_backends(p, c.threads))
        std::fprintf(stderr, "  %s\n", line.c_str());
      p.source += "; per-backend factors from conv, gemm and add probes (backend_fit.h)";
    }
    std::fprintf(stderr, "peak %.1f GFLOP/s, bandwidth %.2f GB/s, call overhead %.3f us (%s, %s)\n",
                 c.peak_gflops, c.bandwidth_gbs, c.call_overhead_us, count_of(size_t(c.threads), "thread").c_str(),
                 c.cpu.c_str());
    if (out->empty()) {
      std::cout << device_profile_to_json(p);
    } else {
      save_device_profile(p, *out);
      note_written(*out);
    }
  });
}

}  // namespace tessera::cli
