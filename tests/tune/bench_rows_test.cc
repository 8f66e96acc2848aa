// bench's per-row ratio and its all-backend against best single-backend check (src/tune/bench.h).
#include <catch2/catch.hpp>

#include "tune/bench.h"

using namespace tessera;

namespace {

BenchRow row(std::vector<std::string> backends, std::optional<double> predicted, std::optional<double> measured) {
  BenchRow r;
  r.backends = std::move(backends);
  r.predicted_ms = predicted;
  r.measured_ms = measured;
  return r;
}

}  // namespace

TEST_CASE("predicted / measured per bench row, when both are known") {
  CHECK(*predicted_over_measured(row({"ref"}, 6.0, 5.0)) == Approx(1.2));
  CHECK(!predicted_over_measured(row({"ref"}, std::nullopt, 5.0)));
  CHECK(!predicted_over_measured(row({"ref"}, 6.0, std::nullopt)));
  CHECK(!predicted_over_measured(row({"ref"}, 6.0, 0.0)));
}

TEST_CASE("the all-backend row against the fastest single-backend row") {
  const std::vector<BenchRow> rows = {
      row({"ref", "onednn"}, 7.0, 7.2),
      row({"ref", "xnnpack"}, 6.9, 7.0),
      row({"ref", "onednn", "eigen", "blas", "xnnpack", "halide"}, 6.8, 6.9),
      row({"ref"}, 300.0, 310.0),
  };
  const std::optional<AllVersusSingle> v = all_versus_best_single(rows);
  REQUIRE(v);
  CHECK(v->all == 2);
  CHECK(v->single == 1);   // ref,xnnpack: the fastest of the rows with one backend besides ref
  CHECK(v->speedup == Approx(7.0 / 6.9));
}

TEST_CASE("no all-backend comparison without a wider row, or without its figure") {
  CHECK(!all_versus_best_single({row({"ref", "onednn"}, 7.0, 7.2), row({"ref", "xnnpack"}, 6.9, 7.0)}));
  CHECK(!all_versus_best_single({row({"ref", "onednn"}, 7.0, 7.2), row({"ref", "onednn", "xnnpack"}, 6.9, std::nullopt)}));
  CHECK(!all_versus_best_single({row({"ref", "onednn", "xnnpack"}, 6.9, 7.0)}));
  // a single backend without ref counts as a single-backend row
  const std::optional<AllVersusSingle> v = all_versus_best_single({row({"onednn"}, 5.0, 5.0), row({"onednn", "xnnpack"}, 4.0, 4.0)});
  REQUIRE(v);
  CHECK(v->single == 0);
  CHECK(v->speedup == Approx(1.25));
}
