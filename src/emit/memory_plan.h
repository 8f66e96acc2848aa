// Static memory planning: every intermediate buffer of a lowered function gets an offset in one
// workspace, so that two buffers live at the same time never overlap.
//
//   calls   0      1      2      3           lifetimes (first def .. last use, inclusive):
//   a  [====================]                a: 0..2  64 KiB      offsets: a 0,  b 64K
//   b         [======]                       b: 1..1  32 KiB               c 64K (b is dead)
//   c                       [=====]          c: 2..3  32 KiB      workspace 96 KiB, sum 128 KiB
//
// Algorithm: greedy by size (TFLite's "greedy by size" offset planner): buffers in decreasing
// size (ties: earlier first def, then index), each placed at the lowest aligned offset that does
// not overlap any already placed buffer whose lifetime intersects its own. It is not optimal (the
// problem is NP-hard) but is within a few percent on CNN chains and runs in O(n^2) for n buffers,
// fine for the <10^4 buffers of one function. In-place reuse (an output aliasing a dead input) is
// not attempted: it would need per-kernel aliasing facts, and the planner is correct without it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

struct BufferLifetime {
  int64_t bytes = 0;
  int first = 0;   // index of the call that writes it
  int last = 0;    // index of the last call that reads it (>= first)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;   // one per lifetime, aligned
  int64_t workspace_bytes = 0;    // max over buffers of offset + bytes
  int64_t sum_bytes = 0;          // sum of buffer sizes: the size with no reuse at all
  int64_t alignment = 64;
};

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, int64_t alignment = 64);

// nullopt when every pair of buffers live at one time is disjoint in memory and every buffer fits
// the workspace; otherwise which pair overlaps. Tests and debug builds call it.
std::optional<std::string> verify_memory_plan(const std::vector<BufferLifetime>& buffers,
                                              const MemoryPlan& plan);

}  // namespace tessera
