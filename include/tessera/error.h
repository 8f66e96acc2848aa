// User errors versus internal invariants.
//
// A UserError is something the person running tessera can fix: a bad file, an unknown backend,
// an unsupported option. Its message is one line of the form "FILE: PLACE: WHAT" (PLACE is a node
// name, a JSON path or a line:column). The CLI catches UserError exactly once, prints the message
// and exits with status 2; nothing else catches it. Internal invariants use assert / TESSERA_CHECK
// and are bugs, never user errors.
//
// The library speaks of its own arguments, never of a front end's flags. Where a message tells the
// user which option to set, the option is a mention (OptionMention) inside the text (ErrorText),
// and each front end spells it its own way when it prints the error:
//
//   library (what())  ... give them sizes, e.g. input_shapes["x"] = {1, 3, 224, 224}
//   CLI               ... give them sizes, e.g. --input-shape x=1x3x224x224     (src/cli/cli_output.h)
//   Python            ... give them sizes, e.g. input_shapes={"x": (1, 3, 224, 224)}
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tessera {

// One of the library's options named inside an error's text, with the values a user could give it:
// {"input_shapes", {{"x", {1, 3, 224, 224}}}}. A binding without dimensions stands for some shape
// ("x=..."); no bindings, the option alone.
struct OptionMention {
  std::string option;
  std::vector<std::pair<std::string, std::vector<int64_t>>> bindings;
};
// How a front end writes a mention.
using OptionSpelling = std::function<std::string(const OptionMention&)>;
// The library's own spelling, its C++ names: `input_shapes["x"] = {1, 3, 224, 224}`, `input_shapes`.
std::string library_spelling(const OptionMention& mention);

// An error's text with option mentions in it; `"bind it with " + mention("input_shapes")` builds one.
class ErrorText {
 public:
  ErrorText() = default;
  ErrorText(std::string text) { parts_.emplace_back(std::move(text)); }
  ErrorText(const char* text) : ErrorText(std::string(text)) {}
  ErrorText(OptionMention mention) { parts_.emplace_back(std::move(mention)); }

  friend ErrorText operator+(ErrorText a, const ErrorText& b) {
    a.parts_.insert(a.parts_.end(), b.parts_.begin(), b.parts_.end());
    return a;
  }
  // The text with each mention written by `spell`.
  std::string render(const OptionSpelling& spell) const;

 private:
  std::vector<std::variant<std::string, OptionMention>> parts_;
};

inline ErrorText mention(std::string option, std::vector<std::pair<std::string, std::vector<int64_t>>> bindings = {}) {
  return ErrorText(OptionMention{std::move(option), std::move(bindings)});
}

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

  // "file: place: what" where `what` mentions options: what() spells them as the library does,
  // message() as a front end does.
  static UserError mentioning(const std::string& file, const std::string& place, const ErrorText& what) {
    return with_text(ErrorText(file + ": " + (place.empty() ? "" : place + ": ")) + what);
  }
  static UserError with_text(ErrorText text) {
    UserError e(text.render(library_spelling));
    e.text_ = std::move(text);
    e.mentions_ = true;
    return e;
  }
  // The message with its mentions spelt by `spell` (what() for an error without mentions).
  std::string message(const OptionSpelling& spell) const { return mentions_ ? text_.render(spell) : what(); }
  // The message as text that keeps its mentions, to build a longer message from.
  ErrorText text() const { return mentions_ ? text_ : ErrorText(what()); }

 private:
  std::string option_, detail_;
  ErrorText text_;
  bool mentions_ = false;
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

}  // namespace tessera

// An internal invariant: failing it is a bug in tessera, reported with its source location.
#define TESSERA_CHECK(cond, what)                                          \
  do {                                                                     \
    if (!(cond)) ::tessera::internal_error(__FILE__, __LINE__, (what));    \
  } while (0)
