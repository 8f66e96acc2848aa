// Device profiles (tessera::parse_device_profile, data/devices/*.json): any text as a profile.
// Seeds: tests/fuzz/corpus/device_profile/.
#include "fuzz_target.h"
#include "cost_models/device_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  fuzz::expect_clean([&] { (void)parse_device_profile(fuzz::as_text(data, size), "device.json"); });
  return 0;
}
