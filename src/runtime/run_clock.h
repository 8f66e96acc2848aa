// The clock that times whole plans and their calls: tune's race, in-plan prices, `bench`, `run
// --against` (verified_choice.h, in_plan_prices.h, src/tune/bench.h).
//
// At one compute thread every backend computes on the calling thread (OpenMP, OpenBLAS,
// XNNPACK's pthreadpool and Halide's pool are all sized 1 by set_compute_threads), so a run's
// latency on an idle core is the CPU time it uses. On a shared machine the two part: wall time
// adds every moment the scheduler gives the core to another process, CPU time does not. Measured
// (AMD EPYC, 2 cores, efficientnet_b0's tuned plan, 150 runs, three rounds each):
//
//   load average 7-12               wall median 54.5-54.7 ms   CPU time per run 6.5-6.9 ms
//   + two busy neighbour processes  wall median 90.8-95.0 ms   CPU time per run 6.7-7.1 ms
//
// so figures taken under load (a tune's prices, kept in the cost database) held the load in them
// and predicted up to 2.3x what the plan ran later. RunClock::cpu reads the process's CPU time
// (CLOCK_PROCESS_CPUTIME_ID: every thread's, so work a library hands to a helper thread still
// counts); on a quiet machine it reads what a stopwatch reads, under load it reads what the plan
// costs. Cache and memory-bandwidth sharing still move it by some percent: the race's paired
// rounds share that out.
//
// Above one thread the calls' CPU time is the sum over the threads (plus OpenMP's spinning while a
// thread waits), not the latency: wall time (steady_clock), as before.
#pragma once

namespace tessera {

enum class RunClock { wall, cpu };

// cpu at one compute thread, wall above.
RunClock run_clock_for_threads(int threads);
// run_clock_for_threads(compute_threads()): the clock for plans run now.
RunClock plan_run_clock();

// A reading of `clock` in milliseconds (only differences mean anything).
double run_clock_ms(RunClock clock);

// "cpu" or "wall" (bench's JSON and table say which).
const char* run_clock_name(RunClock clock);

}  // namespace tessera
