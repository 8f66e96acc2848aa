// NumPy .npy inputs (tessera::parse_npy): any bytes as a .npy file. A tensor that reads must write
// back and read again to the same tensor. Seeds: tests/fuzz/corpus/npy/.
#include "fuzz_target.h"
#include "runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  fuzz::expect_clean([&] {
    HostTensor t = parse_npy(std::string(fuzz::as_text(data, size)), "input.npy");
    HostTensor back = parse_npy(npy_bytes(t), "written.npy");
    if (!(back.type == t.type) || back.bytes != t.bytes)
      fuzz::finding("npy round trip", to_string(t.type) + " reads back as " + to_string(back.type));
  });
  return 0;
}
