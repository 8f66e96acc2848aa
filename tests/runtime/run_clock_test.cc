// The clock that times plans (src/runtime/run_clock.h): CPU time at one compute thread, which a
// busy neighbour on the same core does not inflate, where wall time does.
#include <catch2/catch.hpp>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "backends/compilers/backend_compiler.h"
#include "runtime/run_clock.h"

using namespace tessera;

namespace {

// Spins for `ms` of this process's CPU time (work whose CPU cost is fixed, however long it takes).
void spin_cpu_ms(double ms) {
  const double start = run_clock_ms(RunClock::cpu);
  volatile uint64_t x = 0;
  while (run_clock_ms(RunClock::cpu) - start < ms)
    for (int i = 0; i < 10000; ++i) x = x + static_cast<uint64_t>(i);
}

}  // namespace

TEST_CASE("plans are timed in CPU time at one compute thread, wall time above") {
  CHECK(run_clock_for_threads(1) == RunClock::cpu);
  CHECK(run_clock_for_threads(2) == RunClock::wall);
  ScopedComputeThreads one(1);
  CHECK(plan_run_clock() == RunClock::cpu);
  {
    ScopedComputeThreads two(2);
    CHECK(plan_run_clock() == RunClock::wall);
  }
  CHECK(std::string(run_clock_name(RunClock::cpu)) == "cpu");
  CHECK(std::string(run_clock_name(RunClock::wall)) == "wall");
}

TEST_CASE("a sleep costs no CPU time") {
  const double cpu0 = run_clock_ms(RunClock::cpu), wall0 = run_clock_ms(RunClock::wall);
  ::usleep(60'000);
  CHECK(run_clock_ms(RunClock::wall) - wall0 >= 59.0);
  CHECK(run_clock_ms(RunClock::cpu) - cpu0 < 20.0);
}

TEST_CASE("a busy neighbour on the same core inflates wall time, not CPU time") {
  // This process and a spinning child share one core: the scheduler splits it between them, so
  // 150 ms of CPU work takes about 300 ms by the wall clock. The CPU clock reads the work.
  cpu_set_t one_core;
  CPU_ZERO(&one_core);
  cpu_set_t before;
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  int core = 0;
  while (core < CPU_SETSIZE && !CPU_ISSET(core, &before)) ++core;
  REQUIRE(core < CPU_SETSIZE);
  CPU_SET(core, &one_core);
  REQUIRE(::sched_setaffinity(0, sizeof one_core, &one_core) == 0);
  const pid_t neighbour = ::fork();
  REQUIRE(neighbour >= 0);
  if (neighbour == 0) {
    volatile uint64_t x = 0;
    for (;;) x = x + 1;
  }
  spin_cpu_ms(20);   // the neighbour is running by now
  const double cpu0 = run_clock_ms(RunClock::cpu), wall0 = run_clock_ms(RunClock::wall);
  spin_cpu_ms(150);
  const double cpu = run_clock_ms(RunClock::cpu) - cpu0, wall = run_clock_ms(RunClock::wall) - wall0;
  ::kill(neighbour, SIGKILL);
  ::waitpid(neighbour, nullptr, 0);
  ::sched_setaffinity(0, sizeof before, &before);
  INFO("cpu " << cpu << " ms, wall " << wall << " ms");
  CHECK(cpu < 160.0);
  CHECK(wall > 1.5 * cpu);
}
