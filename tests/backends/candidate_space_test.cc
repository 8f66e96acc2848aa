// The candidate space over several backends: per-backend lists, merged order, thread-count
// independence.
#include <catch2/catch.hpp>

#include "backends/spec/backend_spec_detail.h"
#include "backends/spec/candidate_space.h"
#include "tessera/model_loader.h"

using namespace tessera;

TEST_CASE("Candidate space is the same for every thread count", "[candidate_space]") {
  ImportOptions options;
  options.warn = [](const std::string&) {};
  Graph g = load_model(std::string(TESSERA_SOURCE_DIR) + "/data/models/bert_encoder.onnx", options);
  DataflowIndex index(g);
  auto backends = resolve_backends({"ref", "onednn", "eigen", "blas"}, {});
  CandidateSpace one = enumerate_candidates(index, backends, 1);
  CandidateSpace two = enumerate_candidates(index, backends, 2);
  REQUIRE(one.per_backend.size() == 4);
  CHECK(one.per_backend[0].backend == "ref");
  CHECK(one.per_backend[0].candidates.size() == static_cast<size_t>(g.num_nodes()));
  auto a = one.all(), b = two.all();
  REQUIRE(a.size() == b.size());
  CHECK(a.size() == one.size());
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(a[i].same_as(b[i]));
  for (size_t i = 1; i < a.size(); ++i) CHECK(!candidate_less(a[i], a[i - 1]));
  // Every candidate's ops are supported by its backend and every candidate is valid.
  for (size_t k = 0; k < backends.size(); ++k) {
    for (const auto& c : one.per_backend[k].candidates) {
      CHECK(!c.sub_graph.check(backends[k].detail().limits).has_value());
      c.inside().for_each([&](int n) { CHECK(backends[k].supports(g.node(n).op)); });
    }
  }
}
