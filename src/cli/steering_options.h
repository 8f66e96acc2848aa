// The steering options shared by partition, tune and bench: --pin SELECTOR=BACKEND and --forbid
// SELECTOR=BACKEND, repeatable (src/search/steering.h has the meaning), and --why
// NODE[=BACKEND] on partition and tune (src/search/why_not.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tessera/plan.h"

namespace tessera::cli {

struct SteeringOptions {
  std::vector<std::string> pins;      // SELECTOR=BACKEND
  std::vector<std::string> forbids;
  std::vector<std::string> why;       // NODE[=BACKEND], partition and tune only

  void add_to(CLI::App& cmd);
  void add_why_to(CLI::App& cmd);
  // Pins first, then forbids, each in the order given (UserError naming the flag when malformed).
  std::vector<SteeringRule> rules() const;
};

}  // namespace tessera::cli
