// Scheduling a lowered pipeline: tessera's simple rule-based schedule (the default) or one of the
// autoschedulers Debian ships as Halide plugins.
//
//   simple (default)         inline every pure Func; compute each reduction at root; vectorize
//                            reductions and outputs along their innermost dimension and run them
//                            parallel over their outermost. The functions halide gets are
//                            pointwise chains around at most a few reductions, for which this is
//                            what a hand schedule would do
//   Mullapudi2016            greedy grouping + tiling from a cost model of arithmetic and memory
//                            (Mullapudi et al., SIGGRAPH 2016): compiles as fast, runs 1.1-3x slower
//                            than simple here at one thread (its tiles target 8-way parallelism,
//                            and it vectorizes outer dimensions of transposed reads)
//   Adams2019                beam search over a learned cost model (Adams et al., SIGGRAPH 2019):
//                            5-100 s per pipeline, and still slower than simple on 3 of 4 functions
//   Li2018                   gradient-pipeline scheduler aimed at GPUs (Li et al., SIGGRAPH Asia
//                            2018): on CPUs it mostly parallelizes outer loops; 3-20x slower
//
// Measurements: src/backends/halide/README.md (bench/halide_bench.cc). TESSERA_HALIDE_AUTOSCHEDULER
// picks another (the name is part of every cache key and of the compiler version, so measured
// costs of one never pass for another's). An autoscheduler that rejects a pipeline falls back to
// simple. Autoschedulers get bounds estimates: every input and output has its static shape.
#pragma once

#include <Halide.h>

#include <string>

#include "backends/halide/halide_lowering.h"

namespace tessera::halide {

// "simple" unless TESSERA_HALIDE_AUTOSCHEDULER names another (validated: KernelUnsupported).
std::string autoscheduler_name();

// The machine parameters given to the autoscheduler (part of the cache key).
Halide::MachineParams machine_params();

// Schedules `p` (whose outputs are lowered.outputs) for `target`.
void schedule_pipeline(Halide::Pipeline& p, const LoweredPipeline& lowered, const Halide::Target& target,
                       const std::string& scheduler);

}  // namespace tessera::halide
