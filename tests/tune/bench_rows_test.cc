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

TEST_CASE("bench times every plan in every round, a slow one paired with the pacer") {
  // Three plans: 1 ms, 1.6 ms (past tune's race's 1.5x drop) and 4 ms (past its 3x give-up); every
  // other round a neighbour slows them all by 1.3x. Tune's race times the slow ones once or twice
  // and reads their better round, unpaired; bench times them in all seven rounds and pairs them.
  const std::vector<double> base = {1.0, 1.6, 4.0};
  std::vector<size_t> calls(3, 0);
  auto time_round = [&](size_t i, int, double) {
    const double disturbed = calls[i] % 2 == 1 ? 1.3 : 1.0;
    return base[i] * disturbed * (1.0 + 0.001 * static_cast<double>(calls[i]++));
  };
  const VerifyOptions race = bench_race_options(10, 200.0);
  CHECK(race.min_round_ms == 200.0);
  const auto raced = race_contenders({std::nullopt, std::nullopt, std::nullopt}, {1, 1, 1}, time_round, race);
  CHECK(calls == std::vector<size_t>{7, 7, 7});
  REQUIRE(raced[2]);
  CHECK(*raced[2] / *raced[0] == Approx(4.0).epsilon(0.01));   // paired: the same rounds' ratio
  CHECK(*raced[1] / *raced[0] == Approx(1.6).epsilon(0.01));
  // The control: tune's race drops both slow plans within two rounds.
  calls.assign(3, 0);
  race_contenders({std::nullopt, std::nullopt, std::nullopt}, {1, 1, 1}, time_round, VerifyOptions{});
  CHECK(calls[1] <= 2);
  CHECK(calls[2] <= 2);
}

TEST_CASE("a slow plan's later bench rounds last round_ms of its own runs, at least three") {
  CHECK(bench_round_runs(12, 190.0, 200.0) == 3);     // convnext_tiny's XNNPACK plan beside oneDNN's 18 ms
  CHECK(bench_round_runs(1000, 0.34, 200.0) == 589);  // a 0.34 ms plan beside a 0.11 ms one
  CHECK(bench_round_runs(63, 0.4, 200.0) == 63);      // never more than the race's round
  CHECK(bench_round_runs(10, 2000.0, 200.0) == 3);
}
