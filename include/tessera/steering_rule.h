// SteeringRule: one `--pin SELECTOR=BACKEND` or `--forbid SELECTOR=BACKEND` as the user gave it.
// Apart from steering.h (which resolves rules against a graph and filters candidates) so that a
// Plan can record the rules it obeyed without depending on backends and candidates.
#pragma once

#include <string>

namespace tessera {

struct SteeringRule {
  enum class Kind { pin, forbid };
  Kind kind = Kind::pin;
  std::string selector;   // node name, "op:TYPE" or a glob over node names
  std::string backend;

  // "pin" or "forbid": the option's name in the library and in Python (the CLI's --pin / --forbid).
  std::string kind_name() const { return kind == Kind::pin ? "pin" : "forbid"; }
  std::string text() const { return selector + "=" + backend; }   // as given on the command line
  bool operator==(const SteeringRule&) const = default;
};

}  // namespace tessera
