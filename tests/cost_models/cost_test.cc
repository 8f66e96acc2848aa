// Cost: states, total order, addition, text round trip.
#include <catch2/catch.hpp>

#include <limits>
#include <set>

#include "tessera/cost.h"

using tessera::Cost;

TEST_CASE("Cost orders values < unknown < invalid, invalids by reason") {
  std::vector<Cost> costs = {Cost::invalid("b"), Cost::value(2.0), Cost::unknown(), Cost::invalid("a"),
                             Cost::value(0.5), Cost::zero()};
  std::sort(costs.begin(), costs.end());
  REQUIRE(costs[0] == Cost::zero());
  REQUIRE(costs[1] == Cost::value(0.5));
  REQUIRE(costs[2] == Cost::value(2.0));
  REQUIRE(costs[3].is_unknown());
  REQUIRE(costs[4] == Cost::invalid("a"));
  REQUIRE(costs[5] == Cost::invalid("b"));
  REQUIRE(Cost::value(1e9) < Cost::unknown());
  REQUIRE(Cost::unknown() < Cost::invalid(""));
  REQUIRE(Cost::value(-0.0) == Cost::value(0.0));
  // Usable as a set key: equal costs collapse, different reasons do not.
  std::set<Cost> s = {Cost::unknown(), Cost::unknown(), Cost::invalid("x"), Cost::invalid("y"), Cost::value(1)};
  REQUIRE(s.size() == 4);
}

TEST_CASE("Cost addition: invalid absorbs, then unknown, values add") {
  REQUIRE((Cost::value(1.5) + Cost::value(2.25)).number() == 3.75);
  REQUIRE((Cost::value(1) + Cost::unknown()).is_unknown());
  REQUIRE((Cost::unknown() + Cost::value(1)).is_unknown());
  REQUIRE((Cost::unknown() + Cost::invalid("r")) == Cost::invalid("r"));
  REQUIRE((Cost::invalid("first") + Cost::invalid("second")).reason() == "first");
  REQUIRE((Cost::value(3) + Cost::invalid("r")) == Cost::invalid("r"));
  Cost sum;
  for (int i = 0; i < 10; ++i) sum += Cost::value(0.5);
  REQUIRE(sum.number() == 5.0);
  // Monotonic, never NaN: overflow saturates at +inf.
  double big = std::numeric_limits<double>::max();
  Cost inf = Cost::value(big) + Cost::value(big);
  REQUIRE(inf.is_value());
  REQUIRE(inf.number() == std::numeric_limits<double>::infinity());
  REQUIRE((inf + inf) == inf);
  REQUIRE(Cost::value(1) < inf);
}

TEST_CASE("Cost prints and parses back exactly") {
  for (Cost c : {Cost::value(24.5706), Cost::value(0.1 + 0.2), Cost::value(1e-7), Cost::zero(),
                 Cost::value(std::numeric_limits<double>::infinity()), Cost::unknown(),
                 Cost::invalid("2 exits, max 1 (a)")}) {
    auto back = Cost::parse(c.to_string());
    REQUIRE(back.has_value());
    REQUIRE(*back == c);
  }
  REQUIRE(Cost::value(4.9).to_string() == "4.9");
  REQUIRE(Cost::unknown().to_string() == "unknown");
  REQUIRE(Cost::invalid("no kernel").to_string() == "invalid(no kernel)");
  REQUIRE_FALSE(Cost::parse("nan").has_value());
  REQUIRE_FALSE(Cost::parse("-1").has_value());
  REQUIRE_FALSE(Cost::parse("1.5x").has_value());
  REQUIRE_FALSE(Cost::parse("").has_value());
}
