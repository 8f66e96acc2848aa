// Scheduling a lowered pipeline with one of the autoschedulers Debian ships as Halide plugins.
//
//   Mullapudi2016 (default)  greedy grouping + tiling from a cost model of arithmetic and
//                            memory: ~0.1 s per pipeline, good schedules for stencil and
//                            pointwise chains (Mullapudi et al., SIGGRAPH 2016)
//   Adams2019                beam search over a learned cost model: often faster code, but
//                            seconds per pipeline (Adams et al., SIGGRAPH 2019)
//   Li2018                   gradient-pipeline scheduler aimed at GPUs; on CPUs it mostly
//                            parallelizes outer loops (Li et al., SIGGRAPH Asia 2018)
//   none                     no autoscheduler: every reduction computed at root, outputs
//                            vectorized along their innermost dimension; the fallback when an
//                            autoscheduler rejects a pipeline
//
// The choice and its measurements are in src/backends/halide/README.md. TESSERA_HALIDE_AUTOSCHEDULER
// overrides it (for benchmarks; the name is part of every cache key and of the compiler version).
// Autoschedulers need bounds estimates: every input and output gets its static shape.
#pragma once

#include <Halide.h>

#include <string>

#include "backends/halide/halide_lowering.h"

namespace tessera::halide {

// "Mullapudi2016" unless TESSERA_HALIDE_AUTOSCHEDULER names another (validated: KernelUnsupported).
std::string autoscheduler_name();

// The machine parameters given to the autoscheduler (part of the cache key).
Halide::MachineParams machine_params();

// Schedules `p` (whose outputs are lowered.outputs) for `target`.
void schedule_pipeline(Halide::Pipeline& p, const LoweredPipeline& lowered, const Halide::Target& target,
                       const std::string& scheduler);

}  // namespace tessera::halide
