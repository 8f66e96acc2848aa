// A oneDNN function's intermediates in one arena, buffers whose lifetimes do not meet sharing
// bytes (a static memory plan). Internal to src/backends/onednn/.
//
// Terms. A *buffer* is an allocation the builder made for something a step computes inside the
// function (OnednnProgram::new_mem): a conv's dst, a reorder's copy, a Concat's shared buffer. Its
// *lifetime* is the span of steps [first, last] that touch any byte of it, through the buffer's
// own memory or a view into it.
//
// Why. Built one allocation per buffer, a MobileNet-style function touches every byte of its
// activations once per run: mnasnet1_0's 55 primitives 37 MiB, more than this core's share of
// L3, so every conv writes a dst that is not in any cache (write-allocate from DRAM) and evicts
// what the next conv reads. Timed alone, the same primitives reuse one warm dst; in the plan
// each depthwise conv ran up to 2x its isolated time. With the plan, an inverted-residual block's
// expand, depthwise and project convs write into the bytes their predecessors just freed:
//
//   expand(x) -> A ; dw(A) -> B ; project(B) -> C ; expand(C) -> D
//   lifetimes A [0,1]  B [1,2]  C [2,3]  D [3,..]   ->   C takes A's bytes, D takes B's
//
// Offsets: greedy by size, largest first, each buffer at the lowest aligned offset where it
// overlaps no placed buffer whose lifetime meets its own (the planner of TFLite's arena and of
// Pisarchyk and Lee, "Efficient memory management for deep neural net inference", 2020).
// Not optimal; a chain's arena comes to about its two or three largest neighbours.
//
// What must hold for a buffer to move (OnednnProgram::plan_memory checks each, and leaves the
// buffer where the builder put it otherwise):
// - the first step that touches it writes it (a DST argument), so nothing it held before a run
//   is read: constants the builder wrote (a scalar operand, quantization scales) stay put, and
//   weights reordered once at build time are touched by no step at all;
// - every step that touches it is seen: primitives by their arguments, host steps by the
//   memories they list in Step::args as a primitive would (DNNL_ARG_SRC.., DNNL_ARG_DST); a host
//   step that lists none may touch anything, and no buffer of its function moves.
// Steps run in order on one stream, each to completion, so two buffers whose lifetimes do not
// meet are never live at once. Boundary values (bound to the caller's memory per run) are not
// buffers and are never moved.
#pragma once

#include <cstddef>
#include <vector>

namespace tessera::onednn {

struct BufferLife {
  size_t bytes = 0;
  size_t first = 0, last = 0;   // steps, inclusive
};

struct ArenaPlan {
  std::vector<size_t> offsets;   // by buffer, multiples of `align`
  size_t bytes = 0;              // the arena's size
};

// Greedy-by-size offsets for `buffers`; deterministic (ties by index).
ArenaPlan plan_arena(const std::vector<BufferLife>& buffers, size_t align = 64);

}  // namespace tessera::onednn
