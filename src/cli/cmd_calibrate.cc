// tessera calibrate [-o FILE]: measures this machine's roofline numbers (peak GFLOP/s, memory
// bandwidth, call overhead) and writes a tessera.device profile; without -o it prints the profile.
// data/devices/host.json, the default profile of `--cost roofline`, is this command's output.
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "tessera/calibrate.h"
#include "tessera/device_profile.h"
#include "tessera/error.h"

namespace tessera::cli {

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate", "measure this machine's roofline numbers and write a device profile");
  auto out = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>("host");
  auto opts = std::make_shared<CalibrateOptions>();
  auto copy_mib = std::make_shared<size_t>(opts->copy_bytes >> 20);
  cmd->add_option("-o,--output", *out, "profile to write (default: print to stdout)");
  cmd->add_option("--name", *name, "profile name")->capture_default_str();
  cmd->add_option("--repeats", opts->repeats, "runs per figure; the best counts")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--gemm-size", opts->gemm_n, "sgemm size n (n x n x n)")->capture_default_str()
      ->check(CLI::Range(64, 8192));
  cmd->add_option("--copy-mib", *copy_mib, "size of each copy array, MiB")->capture_default_str()
      ->check(CLI::Range(1, 8192));
  cmd->add_option("--threads", opts->threads, "threads (0 = all cores)")->capture_default_str();
  cmd->callback([=] {
    CalibrateOptions o = *opts;
    o.copy_bytes = *copy_mib << 20;
    Calibration c = calibrate_host(o);
    DeviceProfile p = host_profile(c, o);
    p.name = *name;
    std::fprintf(stderr, "peak %.1f GFLOP/s, bandwidth %.2f GB/s, call overhead %.3f us (%d threads, %s)\n",
                 c.peak_gflops, c.bandwidth_gbs, c.call_overhead_us, c.threads, c.cpu.c_str());
    if (out->empty()) {
      std::cout << device_profile_to_json(p);
    } else {
      save_device_profile(p, *out);
      std::fprintf(stderr, "wrote %s\n", out->c_str());
    }
  });
}

}  // namespace tessera::cli
