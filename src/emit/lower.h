// Lowering: every function (and main) to kernel calls over explicit buffers, with a static
// memory plan (lowered_function.h, memory_plan.h).
//
//   fn(%x, %w) { %0 = Conv(%x, %w); %1 = Relu(%0); return %1 }
//   ->  #0 param x, #1 param w, #2 workspace %0 @0 live 0..1, #3 output %1
//       0: ref.Conv(#0, #1) -> (#2)      1: ref.Relu(#2) -> (#3)
//
// One call per node, except a Composite whose name the backend's Dispatch has a fused kernel
// for: one call for the whole match, reading what the match reads from outside and writing what
// leaves it; the call sits where the match's last node was, so its inputs are ready. Kernels come
// from dispatch_kernel (dispatch.h). In main, a call to a function lowers to a kernel call
// "@<symbol>" whose outputs are main's buffers: the caller allocates them (destination-passing).
// Extern stubs are not lowered (their code is the external module's); lowering is idempotent.
#pragma once

#include <map>
#include <string>

#include "emit/dispatch.h"
#include "emit/module.h"

namespace tessera {

struct LowerOptions {
  std::map<std::string, Dispatch> dispatch;   // by backend; a backend not listed: default only
  int64_t alignment = 64;                     // workspace offsets
};

LoweredFunction lower_graph(const Graph& body, const std::vector<CompositeFunction>& composites,
                            const Dispatch& dispatch, const Module* calls_into, int64_t alignment);
Module lower(const Module& module, const LowerOptions& options);

// The lifetimes of a lowered function's workspace buffers, in buffer order (what its memory plan
// was made from); tests check plans against them with verify_memory_plan.
std::vector<BufferLifetime> workspace_lifetimes(const LoweredFunction& lowered);

}  // namespace tessera
