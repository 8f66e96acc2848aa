// collage == exhaustive in total cost on random small DAGs with random backends and random mock
// costs; every plan from every strategy is checked valid (covering, convex, supported, acyclic).
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "partition/test_graphs.h"
#include "search/plan_check.h"
#include "search/random_backends.h"
#include "search/search_fixture.h"

using namespace tessera;
using namespace tessera::testing;

TEST_CASE("collage equals exhaustive on 300 random DAGs, all plans valid", "[search][random]") {
  std::mt19937 rng(20240611);
  // What the 300 trials covered: the equality above means little if every plan were all-ref.
  int mixed = 0, crossing = 0, greedy_worse = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto [n, g, backends, mc] = random_problem(rng, 11, true);
    std::uniform_real_distribution<double> w(0.5, 5.0);
    // Every third trial puts b0 on another device, so crossings cost (crossing_accounting.h).
    if (trial % 3 == 0) {
      backends[0].device = "gpu";
      mc.transfer_latency = w(rng);
      mc.transfer_per_byte = 1e-3;
    }
    MockCostModel costs(mc);
    INFO("trial " << trial << ", " << n << " nodes, " << backends.size() << " backends");
    PartitionOutcome collage = run_search(g, backends, costs, "collage");
    PartitionOutcome exhaustive = run_search(g, backends, costs, "exhaustive", false);
    REQUIRE(collage.plan.total_cost.is_value());
    CHECK(collage.plan.total_cost.number() == Approx(exhaustive.plan.total_cost.number()).epsilon(1e-9));
    std::set<std::string> used;
    for (const Partition& p : collage.plan.partitions) used.insert(p.backend);
    mixed += used.size() > 1;
    crossing += collage.plan.transfer_cost.is_value() && collage.plan.transfer_cost.number() > 0;
    for (const PartitionOutcome* o : {&collage, &exhaustive}) {
      auto bad = check_plan(o->plan, *o->index, backends);
      INFO(o->plan.search << ": " << bad.value_or(""));
      CHECK_FALSE(bad);
    }
    for (std::string search : {"greedy", "single:b0"}) {
      PartitionOutcome other = run_search(g, backends, costs, search);
      auto bad = check_plan(other.plan, *other.index, backends);
      INFO(search << ": " << bad.value_or(""));
      CHECK_FALSE(bad);
      CHECK(other.plan.total_cost >= collage.plan.total_cost);
      if (search == "greedy") greedy_worse += other.plan.total_cost > collage.plan.total_cost;
    }
  }
  INFO(mixed << " plans mixing backends, " << crossing << " paying transfers, greedy worse in " << greedy_worse);
  CHECK(mixed >= 100);
  CHECK(crossing >= 10);
  CHECK(greedy_worse >= 100);
}
