// Random problems for the search's exactness tests (collage == exhaustive): the op vocabulary of
// random_dag, a backend with random ops, fusion style and limits, so that random plans mix
// backends, fuse, and hit every validity limit, and a whole problem (DAG, backends, mock costs).
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "partition/test_graphs.h"
#include "tessera/backend_spec.h"
#include "backends/spec/backend_spec_detail.h"
#include "cost_models/mock_cost_model.h"

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
  spec.detail().fusion = static_cast<FusionStyle>(std::uniform_int_distribution<int>(0, 2)(rng));
  spec.detail().limits.max_depth = std::uniform_int_distribution<int>(0, 4)(rng);
  spec.detail().limits.max_exits = std::uniform_int_distribution<int>(1, 3)(rng);
  spec.detail().limits.allow_taps = coin(2);
  spec.source = "<random>";
  return spec;
}

// One random search problem: a DAG of 3..max_nodes nodes over the ops above, 1 to 3 random
// backends b0, b1, ... and ref last (a fallback that can always take a node alone), and mock costs
// per backend (per op, decay; with `overheads`, sometimes a per-function overhead and a Relu
// weight). Callers add devices, transfer and boundary prices to `costs` themselves.
struct RandomProblem {
  int nodes = 0;
  Graph graph;
  std::vector<BackendSpec> backends;
  MockCosts costs;
};

inline RandomProblem random_problem(std::mt19937& rng, int max_nodes, bool overheads) {
  RandomProblem p;
  p.nodes = std::uniform_int_distribution<int>(3, max_nodes)(rng);
  p.graph = random_dag(rng, p.nodes, kRandomUnary, kRandomBinary);
  const int k = std::uniform_int_distribution<int>(1, 3)(rng);
  for (int i = 0; i < k; ++i) p.backends.push_back(random_backend(rng, "b" + std::to_string(i)));
  p.backends.push_back(builtin_backend_spec("ref"));
  std::uniform_real_distribution<double> w(0.5, 5.0);
  for (const BackendSpec& b : p.backends) {
    MockBackendCosts& c = p.costs.backends[b.name];
    c.per_op = w(rng);
    c.decay = std::uniform_real_distribution<double>(0.3, 1.0)(rng);
    if (!overheads) continue;
    c.overhead = std::uniform_int_distribution<int>(0, 1)(rng) ? w(rng) : 0.0;
    if (std::uniform_int_distribution<int>(0, 1)(rng)) c.op["Relu"] = w(rng);
  }
  return p;
}

// Makes one value that a node reads a graph output as well (none, when no such value exists): the
// contract charges its crossings to other backends like any other value's; only the hand-off to
// the caller is free.
inline void add_read_output(std::mt19937& rng, Graph& g) {
  std::vector<ValueId> read;
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v != kNoValue && g.value(v).producer != kNoNode && !g.is_output(v)) read.push_back(v);
  std::sort(read.begin(), read.end());
  read.erase(std::unique(read.begin(), read.end()), read.end());
  if (!read.empty()) g.outputs.push_back(read[std::uniform_int_distribution<size_t>(0, read.size() - 1)(rng)]);
}

}  // namespace tessera::testing
