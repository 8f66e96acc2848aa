// Random problems for the search's exactness tests (collage == exhaustive): the op vocabulary of
// random_dag and a backend with random ops, fusion style and limits, so that random plans mix
// backends, fuse, and hit every validity limit.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tessera/backend_spec.h"

namespace tessera::testing {

inline const std::vector<std::string> kRandomUnary{"Relu", "Abs", "Sigmoid", "Reshape", "Softmax", "MatMul"};
inline const std::vector<std::string> kRandomBinary{"Add", "Mul", "Concat"};

inline BackendSpec random_backend(std::mt19937& rng, const std::string& name) {
  auto coin = [&](int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng) == 0; };
  BackendSpec spec;
  spec.name = name;
  for (const auto* list : {&kRandomUnary, &kRandomBinary})
    for (const std::string& op : *list)
      if (coin(2)) spec.ops.push_back(op);
  std::sort(spec.ops.begin(), spec.ops.end());
  spec.fusion = static_cast<FusionStyle>(std::uniform_int_distribution<int>(0, 2)(rng));
  spec.limits.max_depth = std::uniform_int_distribution<int>(0, 4)(rng);
  spec.limits.max_exits = std::uniform_int_distribution<int>(1, 3)(rng);
  spec.limits.allow_taps = coin(2);
  spec.source = "<random>";
  return spec;
}

}  // namespace tessera::testing
