// User errors versus internal invariants.
//
// A UserError is something the person running tessera can fix: a bad file, an unknown backend,
// an unsupported option. Its message is one line of the form "FILE: PLACE: WHAT" (PLACE is a node
// name, a JSON path or a line:column). The CLI catches UserError exactly once, prints the message
// and exits with status 2; nothing else catches it. Internal invariants use assert / TESSERA_CHECK
// and are bugs, never user errors.
//
// Messages are printable: names in them come from models and files that tessera did not write, so
// the constructors pass the whole message through printable() (control bytes, DEL and bytes that
// are not valid UTF-8 become \xNN). One place escapes, so no message can carry a raw newline or
// terminal escape into a log, and escaping twice changes nothing.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

// `text` with every byte outside printable ASCII and valid UTF-8 (C0/C1 controls and DEL included)
// written as \xNN: "café" stays as it is, "a<newline>b" becomes "a\x0ab". Idempotent.
std::string printable(std::string_view text);

// An nlohmann::json exception's message without its "[json.exception.out_of_range.406] " prefix.
std::string json_error_text(std::string_view what);

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(printable(message)) {}
  // "file: place: what", leaving out an empty place.
  UserError(const std::string& file, const std::string& place, const std::string& what)
      : std::runtime_error(printable(file + ": " + (place.empty() ? "" : place + ": ") + what)) {}
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

}  // namespace tessera

// An internal invariant: failing it is a bug in tessera, reported with its source location.
#define TESSERA_CHECK(cond, what)                                          \
  do {                                                                     \
    if (!(cond)) ::tessera::internal_error(__FILE__, __LINE__, (what));    \
  } while (0)
