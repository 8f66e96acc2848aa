// Test helper: how many steps of a oneDNN function's program use an implementation whose name
// starts with `kind` ("convolution:", "reorder:", "host:concat"), as OnednnProgram::implementations
// lists them. The onednn tests check which kernels a function builds with it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "backends/onednn/onednn_program.h"

namespace tessera::testing {

// How many of a program's steps (OnednnProgram::implementations) start with `kind`.
inline size_t count_prefix(const std::vector<std::string>& impls, const std::string& kind) {
  size_t n = 0;
  for (const std::string& impl : impls) n += impl.rfind(kind, 0) == 0;
  return n;
}

inline size_t count_prefix(const Graph& fn, const std::string& kind) {
  return count_prefix(onednn::OnednnProgram(fn, dnnl::engine(dnnl::engine::kind::cpu, 0)).implementations(), kind);
}

// A program's steps, one per line, for a failing check's message (an INFO inside a loop body
// ends with each iteration and would show none of them).
inline std::string listing(const std::vector<std::string>& impls) {
  std::string text;
  for (const std::string& impl : impls) text += impl + "\n";
  return text;
}

}  // namespace tessera::testing
