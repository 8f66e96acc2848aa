#include "cli/steering_options.h"

#include "search/steering.h"

namespace tessera::cli {

void SteeringOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--pin", pins,
                 "SELECTOR=BACKEND: only BACKEND may take these nodes (a node name, op:TYPE or a glob such as "
                 "'/layer1/*'; repeatable)");
  cmd.add_option("--forbid", forbids, "SELECTOR=BACKEND: BACKEND may not take these nodes (repeatable)");
}

void SteeringOptions::add_why_to(CLI::App& cmd) {
  cmd.add_option("--why", why,
                 "NODE[=BACKEND]: why NODE runs where it does: per backend (or the one named) why it has no "
                 "candidate, or its best candidate and what the cheapest plan putting it there costs (repeatable)");
}

std::vector<SteeringRule> SteeringOptions::rules() const {
  std::vector<SteeringRule> out;
  for (const std::string& p : pins) out.push_back(parse_steering_rule(SteeringRule::Kind::pin, p));
  for (const std::string& f : forbids) out.push_back(parse_steering_rule(SteeringRule::Kind::forbid, f));
  return out;
}

}  // namespace tessera::cli
