// What every fuzz target checks, and the little each needs besides its loader.
//
// A loader given any bytes must either return or throw a UserError (docs/fuzzing.md), which the CLI
// prints as one escaped line (text.h). Anything else is a finding, and `expect_clean` turns it into
// a crash libFuzzer records: another exception (nlohmann's, std::out_of_range, bad_alloc...) or
// an internal error (TESSERA_CHECK aborts). ASan and UBSan, which every target is built with,
// report memory errors, leaks and undefined behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "tessera/error.h"
#include "support/text.h"

namespace tessera::fuzz {

// The target's input as text.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void finding(const char* kind, const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", kind, printable(what).c_str());
  std::abort();
}

// Runs `load`; only a return or a clean UserError is allowed.
template <class F>
void expect_clean(F&& load) {
  try {
    load();
  } catch (const UserError& e) {
    if (*e.what() == '\0') finding("UserError without a message", "");
  } catch (const std::exception& e) {
    finding("exception other than UserError", e.what());
  }
}

// A file holding `bytes`, one per process and extension (loaders that take a path read it back):
// $TMPDIR/tessera_fuzz_<pid><ext>.
std::string write_temp(std::string_view bytes, const char* ext);

// A path inside the source tree (seed models and graphs the targets use as context).
std::string source_path(const char* relative);

}  // namespace tessera::fuzz
