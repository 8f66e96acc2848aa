// LoweredFunction: a function as a flat sequence of kernel calls over explicit buffers.
//
//   fn(%x: param, %w: param) -> %y: output          buffers: x param, w param, t workspace@0,
//     call onednn.Conv(x, w) -> t                            y output (the caller's)
//     call ref.Relu(t) -> y                           workspace 256 B, sum of buffers 256 B
//
// Destination-passing: a kernel writes into buffers it is given and allocates nothing; the
// function's outputs are allocated by its caller (in main, a call's results are main's own
// buffers), its parameters belong to the caller, its constants are static data, and only
// intermediates live in the workspace, at the offsets the static memory planner chose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emit/memory_plan.h"
#include "tessera/tensor_type.h"

namespace tessera {

enum class BufferKind { Param, Output, Constant, Workspace };
const char* buffer_kind_name(BufferKind k);   // "param", "output", "const", "workspace"

struct Buffer {
  std::string name;             // the value's name
  TensorType type;
  BufferKind kind = BufferKind::Workspace;
  int64_t offset = -1;          // Workspace only
  int first = -1, last = -1;    // calls that write / last read it (-1: none)
};

struct KernelCall {
  std::string kernel;           // "ref.Relu", "onednn.softmax", "byoc.conv_bias_relu", "@symbol"
  std::string label;            // the node names it covers, joined with '+'
  std::vector<int> inputs;      // buffer indices, -1 for a missing optional input
  std::vector<int> outputs;     // buffer indices
};

struct LoweredFunction {
  std::vector<Buffer> buffers;
  std::vector<KernelCall> calls;
  MemoryPlan memory;            // over the Workspace buffers, in buffer order
};

}  // namespace tessera
