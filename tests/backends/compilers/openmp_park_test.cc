// run_with_openmp_parked (openmp_park.h): the work runs on the caller's thread inside a region
// that holds OpenMP's whole team; what it throws comes back; with one thread it just runs.
#include <omp.h>

#include <stdexcept>
#include <thread>

#include "backends/compilers/openmp_park.h"
#include "backends/compilers/backend_compiler.h"

using namespace tessera;

TEST_CASE("run_with_openmp_parked: the caller runs the work while the team is held in the region") {
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  int team = 0;
  bool in_region = false;
  run_with_openmp_parked([&] {
    ran_on = std::this_thread::get_id();
    team = omp_get_num_threads();
    in_region = omp_in_parallel();
  });
  CHECK(ran_on == caller);
  CHECK(in_region);
  CHECK(team == 3);   // every other thread of the team is parked in the region, none free to spin
  for (int i = 0; i < 50; ++i) run_with_openmp_parked([] {});   // parks and releases again and again
  CHECK_THROWS_AS(run_with_openmp_parked([] { throw std::runtime_error("from the work"); }), std::runtime_error);

  omp_set_num_threads(1);   // one thread: no region
  run_with_openmp_parked([&] { in_region = omp_in_parallel(); });
  CHECK_FALSE(in_region);
  omp_set_num_threads(before);
}
