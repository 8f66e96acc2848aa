// Catch2's main, after one fixture every test shares: plain `--cost roofline` (in-process and in
// every tessera the tests start) prices with data/devices/host.json instead of calibrating this
// machine and keeping the profile in ~/.cache (host_profile.h's test hook). Tests see fixed
// numbers and write nothing outside their own folders; the tests of calibration itself unset it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char** argv) {
  ::setenv("TESSERA_ROOFLINE_PROFILE", TESSERA_SOURCE_DIR "/data/devices/host.json", 0);
  return Catch::Session().run(argc, argv);
}
