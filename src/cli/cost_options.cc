#include "cli/cost_options.h"

#include "cost_models/host_profile.h"
#include "cost_models/measure/measured_cost_model.h"

namespace tessera::cli {

CostModelOptions cli_cost_model_options(int threads, const std::string& cache) {
  CostModelOptions o = measure_cost_model_options(threads);
  o.host.threads = threads;
  if (!cache.empty()) o.host.dir = host_profile_dir_for(cache);
  return o;
}

}  // namespace tessera::cli
