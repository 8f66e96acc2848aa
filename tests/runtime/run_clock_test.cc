// The clock that times plans (src/runtime/run_clock.h): CPU time at one compute thread, which a
// busy neighbour on the same core does not inflate, where wall time does.
#include <catch2/catch.hpp>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "backends/compilers/backend_compiler.h"
#include "runtime/run_clock.h"

using namespace tessera;

namespace {

// Runs `measure` in a forked child, a process of one thread, and returns the two figures it
// writes. The clock reads the whole process's CPU time, so in the test binary itself other
// threads (an OpenMP team still spinning after an earlier test's parallel region, a TBB worker)
// would add theirs; the child has only the thread that forked it.
template <typename F>
std::pair<double, double> in_child(F measure) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    const std::pair<double, double> r = measure();
    const double out[2] = {r.first, r.second};
    const bool ok = ::write(fds[1], out, sizeof out) == static_cast<ssize_t>(sizeof out);
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  double in[2] = {-1, -1};
  const bool read_all = ::read(fds[0], in, sizeof in) == static_cast<ssize_t>(sizeof in);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(read_all);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return {in[0], in[1]};
}

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
  const auto [cpu, wall] = in_child([] {
    const double cpu0 = run_clock_ms(RunClock::cpu), wall0 = run_clock_ms(RunClock::wall);
    ::usleep(60'000);
    return std::pair<double, double>(run_clock_ms(RunClock::cpu) - cpu0, run_clock_ms(RunClock::wall) - wall0);
  });
  INFO("cpu " << cpu << " ms, wall " << wall << " ms");
  CHECK(wall >= 59.0);
  CHECK(cpu < 20.0);
}

TEST_CASE("a busy neighbour on the same core inflates wall time, not CPU time") {
  // A child process and a spinning grandchild share one core: the scheduler splits it between
  // them, so 150 ms of CPU work takes about 300 ms by the wall clock. The CPU clock reads the work.
  const auto [cpu, wall] = in_child([] {
    cpu_set_t here;
    if (::sched_getaffinity(0, sizeof here, &here) != 0) ::_exit(2);
    int core = 0;
    while (core < CPU_SETSIZE && !CPU_ISSET(core, &here)) ++core;
    if (core == CPU_SETSIZE) ::_exit(2);
    cpu_set_t one_core;
    CPU_ZERO(&one_core);
    CPU_SET(core, &one_core);
    if (::sched_setaffinity(0, sizeof one_core, &one_core) != 0) ::_exit(2);
    const pid_t neighbour = ::fork();
    if (neighbour < 0) ::_exit(2);
    if (neighbour == 0) {
      volatile uint64_t x = 0;
      for (;;) x = x + 1;
    }
    spin_cpu_ms(20);   // the neighbour is running by now
    const double cpu0 = run_clock_ms(RunClock::cpu), wall0 = run_clock_ms(RunClock::wall);
    spin_cpu_ms(150);
    const double c = run_clock_ms(RunClock::cpu) - cpu0, w = run_clock_ms(RunClock::wall) - wall0;
    ::kill(neighbour, SIGKILL);
    ::waitpid(neighbour, nullptr, 0);
    return std::pair<double, double>(c, w);
  });
  INFO("cpu " << cpu << " ms, wall " << wall << " ms");
  CHECK(cpu < 160.0);
  CHECK(wall > 1.5 * cpu);
}
