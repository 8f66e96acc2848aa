// The options every subcommand gives the --cost factory (cost_model.h): measured costs available,
// and for roofline this machine's profile at the thread count the plan will run with, kept beside
// the cost database (host_profile.h).
#pragma once

#include <string>

#include "cost_models/cost_model_options.h"
#include "tessera/cost_model.h"

namespace tessera::cli {

// `threads`: the command's --threads (what run/tune/bench execute with); `cache`: its --cache, or
// "" for the default database's folder.
CostModelOptions cli_cost_model_options(int threads, const std::string& cache);

}  // namespace tessera::cli
