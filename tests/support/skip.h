// Saying "this test cannot run here" to ctest. Catch2 v2 has no SKIP, so a test case that needs
// something optional (PaddleOCR's models, Python's onnx) is tagged hidden, e.g. [.paddleocr], and
// runs in a ctest entry of its own (tessera_add_test(... OPTIONAL_TAGS paddleocr) makes
// `<test>.paddleocr`, with SKIP_RETURN_CODE 77). When the prerequisite is missing the case calls
// skip_test("why"): the reason goes to stderr and the process exits 77, which ctest reports as
// "Skipped" with that output. scripts/test.sh fails when ctest reports any skip, so CI cannot
// pass while skipping.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tessera::testing {

constexpr int kSkipReturnCode = 77;

[[noreturn]] inline void skip_test(const std::string& reason) {
  std::fprintf(stderr, "SKIPPED: %s\n", reason.c_str());
  std::fflush(nullptr);
  std::_Exit(kSkipReturnCode);
}

}  // namespace tessera::testing
