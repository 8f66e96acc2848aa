// User errors versus internal invariants.
//
// A UserError is something the person running tessera can fix: a bad file, an unknown backend,
// an unsupported option. Its message is one line of the form "FILE: PLACE: WHAT" (PLACE is a node
// name, a JSON path or a line:column). The CLI catches UserError exactly once, prints the message
// and exits with status 2; nothing else catches it. Internal invariants use assert / TESSERA_CHECK
// and are bugs, never user errors.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
  // "file: place: what", leaving out an empty place.
  UserError(const std::string& file, const std::string& place, const std::string& what)
      : std::runtime_error(file + ": " + (place.empty() ? "" : place + ": ") + what) {}

  // A bad value of one of the library's options, named as the library names it ("backends",
  // "search", "max_rel_error": the fields of TuneOptions and the arguments of the calls): what()
  // is "backends: place: what". Each front end spells the option its own way when it prints the
  // error (the CLI as "--backends", src/cli/cli_output.h; Python as the keyword argument, which is
  // the library's name), so the library never speaks of a front end's flags.
  static UserError option(const std::string& name, const std::string& place, const std::string& what) {
    UserError e(name, place, what);
    e.option_ = name;
    e.detail_ = (place.empty() ? "" : place + ": ") + what;
    return e;
  }
  // The option an option() error names ("" for any other error), and its message without it.
  const std::string& option_name() const { return option_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string option_, detail_;
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

}  // namespace tessera

// An internal invariant: failing it is a bug in tessera, reported with its source location.
#define TESSERA_CHECK(cond, what)                                          \
  do {                                                                     \
    if (!(cond)) ::tessera::internal_error(__FILE__, __LINE__, (what));    \
  } while (0)
