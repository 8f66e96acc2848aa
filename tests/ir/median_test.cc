// tessera/median.h: the one median and percentile every timing summary uses.
#include <catch2/catch.hpp>

#include "support/median.h"

using tessera::median;
using tessera::percentile;

TEST_CASE("median of odd, even, unsorted and empty samples", "[median]") {
  CHECK(median({5.0}) == 5.0);
  CHECK(median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(median({1.0, 3.0, 2.0, 10.0}) == 2.5);   // mean of the two middle samples
  CHECK(median({}) == 0.0);
}

TEST_CASE("percentiles interpolate between closest ranks", "[median]") {
  const std::vector<double> s{0.0, 10.0, 20.0, 30.0, 40.0};
  CHECK(percentile(s, 0.0) == 0.0);
  CHECK(percentile(s, 1.0) == 40.0);
  CHECK(percentile(s, 0.1) == Approx(4.0));
  CHECK(percentile(s, 0.9) == Approx(36.0));
  CHECK(percentile(s, 0.5) == median(s));
}

TEST_CASE("the lower median is a sample: the lower middle of an even count", "[median]") {
  CHECK(tessera::lower_median({5.0}) == 5.0);
  CHECK(tessera::lower_median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(tessera::lower_median({1.0, 3.0, 2.0, 10.0}) == 2.0);
  CHECK(tessera::lower_median({16.0, 9.5}) == 9.5);   // of two rounds, one disturbed: the other
  CHECK(tessera::lower_median({}) == 0.0);
}
