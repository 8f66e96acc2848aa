// Test helper: how many steps of a oneDNN function's program use an implementation whose name
// starts with `kind` ("convolution:", "reorder:", "host:concat"), as OnednnProgram::implementations
// lists them. The onednn tests check which kernels a function builds with it.
#pragma once

#include <cstddef>
#include <string>

#include "backends/onednn/onednn_program.h"

namespace tessera::testing {

inline size_t count_prefix(const Graph& fn, const std::string& kind) {
  size_t n = 0;
  for (const std::string& impl : onednn::OnednnProgram(fn, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations())
    n += impl.rfind(kind, 0) == 0;
  return n;
}

}  // namespace tessera::testing
