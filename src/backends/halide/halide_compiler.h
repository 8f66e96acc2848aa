// The `halide` backend's compiler: a function of elementwise, broadcast, injective and reduction
// ops becomes ONE Halide pipeline, autoscheduled, compiled ahead of time for this CPU and cached on
// disk. It plays the part TVM's own fusing code generator plays in Collage beside DNNL.
//
//   fn(x, s) { Resize(x) ─▶ Add(., s) ─▶ Relu } -> y
//     compile:  cache hit?  ─yes─▶ dlopen <cache>/<hash>.so                       (~1 ms)
//                           ─no──▶ lower (halide_lowering.h): one Func per value
//                                  schedule (halide_schedule.h): simple rules or an autoscheduler
//                                  compile_to_object, link .so, rename, dlopen     (~0.1-0.5 s)
//     run:      point the prebuilt halide_buffer_t's at the caller's buffers; one call
//
// Only the function's outputs are realized; the schedule decides which intermediates are inlined,
// computed per tile, or stored. Conv, MatMul and Gemm are not lowered (onednn's), nor
// are integer tensors: KernelUnsupported. Compilation is serialized within a process (Halide's
// lowering keeps global state); loaded pipelines run concurrently.
//
// pipelines_compiled() counts Halide compilations in this process (cache misses), so tests can
// tell a cache hit from a compile without timing anything.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/compilers/backend_compiler.h"

namespace tessera {

std::unique_ptr<BackendCompiler> make_halide_compiler();

namespace halide {
int64_t pipelines_compiled();
}  // namespace halide

}  // namespace tessera
