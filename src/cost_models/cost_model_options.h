// CostModelOptions: what make_cost_model (include/tessera/cost_model.h) needs beyond the spec
// text: how to build the "measure" model (which lives with the backends, outside tessera_cost)
// and where this machine's roofline profile is kept (host_profile.h).
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "tessera/cost_model.h"
#include "cost_models/host_profile.h"

namespace tessera {

// How --cost specs are turned into models.
struct CostModelOptions {
  // Builds the "measure" model (given the text after "measure:", possibly empty). Unset: "measure"
  // is a usage error naming the missing support.
  std::function<std::unique_ptr<CostModel>(std::string_view arg)> make_measure;
  // "roofline" with no cpu profile named: this machine's profile, kept or calibrated
  // (host_profile.h); also the thread count a named cpu profile is held against, and where its
  // one-line warning goes when it was made on another machine.
  HostProfileOptions host;
};

}  // namespace tessera
