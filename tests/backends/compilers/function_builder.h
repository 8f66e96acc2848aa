// Test helper: small functions built by hand (as extract_function would produce them: weights are
// inputs), and a check that a backend's compiled function matches ref's on seeded random inputs.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/compilers/backend_compiler.h"
#include "support/graph_builder.h"
#include "tessera/graph.h"
#include "tessera/host_tensor.h"

namespace tessera::testing {

// Functions are built with the shared test builder; `node` names nodes as the importer would.
using FunctionBuilder = GraphBuilder;

struct RunResult {
  std::vector<HostTensor> outputs;
};

inline RunResult run_compiled(const BackendCompiler& compiler, const Graph& fn, uint64_t seed = 1) {
  std::vector<HostTensor> ins, outs;
  for (size_t i = 0; i < fn.inputs.size(); ++i) ins.push_back(HostTensor::random(fn.value(fn.inputs[i]).type, seed + i));
  for (ValueId v : fn.outputs) outs.emplace_back(fn.value(v).type);
  std::vector<ConstTensorView> in_views;
  std::vector<TensorView> out_views;
  for (const HostTensor& t : ins) in_views.push_back(t.view());
  for (HostTensor& t : outs) out_views.push_back(t.view());
  auto compiled = compiler.compile(fn);
  compiled->run(in_views, out_views);
  for (HostTensor& t : outs) std::fill(t.bytes.begin(), t.bytes.end(), std::byte{0x7f});  // run twice: no stale state
  compiled->run(in_views, out_views);
  return {std::move(outs)};
}

// Runs fn on `backend` and on ref and compares every output: |a - r| <= tol * (1 + |r|).
inline void check_against_ref(const std::string& backend, const Graph& fn, double tol = 1e-4) {
  auto ref = make_backend_compiler("ref");
  auto other = make_backend_compiler(backend);
  const RunResult want = run_compiled(*ref, fn), got = run_compiled(*other, fn);
  for (size_t o = 0; o < want.outputs.size(); ++o) {
    auto w = want.outputs[o].as<float>();
    auto g = got.outputs[o].as<float>();
    REQUIRE(w.size() == g.size());
    double worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      const double err = std::fabs(double(g[i]) - double(w[i])) / (1.0 + std::fabs(double(w[i])));
      if (!(err <= worst)) {
        worst = err;
        at = i;
      }
    }
    INFO(backend << " output " << o << " element " << at << ": got " << g[at] << ", ref " << w[at]);
    CHECK(worst <= tol);
  }
}

}  // namespace tessera::testing
